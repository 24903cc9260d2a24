"""``enhance status``: how model assistance stands, per scene, without calling a model.

``--model module:attribute`` names the host's :class:`~memquill.enhance.TextModel` (or a function
returning one), as the host configures it; each scene is then shown as not configured, ready,
healthy, cooling down (until when), blocked (change the key to unblock) or unavailable (why).
Cooldowns live in the process that made the calls, so a fresh command shows only what
persists: credential blocks, which it lists whether or not a model is given. Nothing here sends
a request.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memquill.cli.context import Context, add_common
from memquill.foundation.controls import escape_controls
from memquill.plugins import text_model

if TYPE_CHECKING:
    from memquill.enhance import BlockReceipt, SceneStatus, TextModel

__all__ = ["load_model", "register"]


def register(subparsers: Any) -> None:
    """Add ``enhance status`` to ``memquill``."""
    enhance = subparsers.add_parser(
        "enhance",
        help="optional model assistance (re-ranking): status per scene",
        description="Optional model assistance. Memory never needs a model; with one, search "
        "can re-rank keyword candidates.",
    )
    commands = enhance.add_subparsers(dest="enhance_command", metavar="COMMAND", required=True)
    status = commands.add_parser(
        "status",
        help="per scene: configured, healthy, cooling down, blocked or unavailable",
        description="Show how model assistance stands per scene, without calling the model. "
        "Exits 1 when a scene is blocked or unavailable.",
    )
    status.add_argument(
        "--model",
        metavar="MODULE:ATTR",
        help="the host's TextModel (or a function returning one), e.g. myapp.models:reranker",
    )
    status.add_argument(
        "--state-dir",
        metavar="DIR",
        type=Path,
        help="where the install key and block receipts live (default: the user data folder)",
    )
    status.set_defaults(handler=_status)
    add_common(status)


def load_model(spec: str) -> TextModel:
    """The text model ``module:attribute`` names (called first when it is a factory).

    A framework's own model (a LangChain chat model, a LlamaIndex LLM) is wrapped by the
    installed adapter that knows it (the ``memquill_register_text_models`` hook). The module is
    looked for in the current folder first, as ``uvicorn module:app`` does: an installed
    ``memquill`` script does not otherwise see the folder it runs in.

    Raises:
        ValueError: the spec is malformed, or does not lead to a text model.
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"--model takes MODULE:ATTRIBUTE, not {spec!r}")
    _search_current_folder()
    value: object = importlib.import_module(module_name)
    for part in attribute.split("."):
        value = getattr(value, part)
    model = None if isinstance(value, type) else text_model(value)
    if model is None and callable(value):
        try:
            value = value()
        except TypeError as error:
            raise ValueError(f"{spec} could not be called without arguments: {error}") from None
        model = text_model(value)
    if model is None:
        raise ValueError(
            f"{spec} is not a TextModel (identity and async generate), nor a model an "
            "installed adapter can wrap (a LangChain chat model, a LlamaIndex LLM)"
        )
    return model


def _search_current_folder() -> None:
    """Put the current folder first on the module search path (once)."""
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)


def _status(args: argparse.Namespace, context: Context) -> int:
    # Model assistance is loaded by the commands that use it, not by every command.
    from memquill.enhance import SCENES, AuxiliaryRunner, BlockReceipts, default_state_dir

    state_dir: Path = args.state_dir or default_state_dir()
    try:
        model = load_model(args.model) if args.model else None
    except (ImportError, AttributeError, ValueError) as error:
        context.err.write(escape_controls(f"error[usage]: {error}") + "\n")
        return 2
    runner = AuxiliaryRunner(state_dir=state_dir)
    statuses = [runner.status(scene, model) for scene in SCENES]
    receipts = BlockReceipts(state_dir).all()
    context.emit(_text(state_dir, model, statuses, receipts), _json(model, statuses, receipts))
    return 1 if any(s.state in ("blocked", "unavailable") for s in statuses) else 0


def _text(
    state_dir: Path,
    model: TextModel | None,
    statuses: list[SceneStatus],
    receipts: list[BlockReceipt | None],
) -> str:
    lines = [f"model assistance (state in {state_dir})"]
    lines.append(f"model: {model.identity.label}" if model is not None else "model: none given")
    lines.extend(f"  {status.describe()}" for status in statuses)
    lines.append(f"credential blocks on record ({len(receipts)}):")
    for receipt in receipts:
        if receipt is None:
            lines.append("  (unreadable receipt: remove it to let model assistance run again)")
        else:
            lines.append(f"  {receipt.label}: lifts when that model's key or settings change")
    if not receipts:
        lines.append("  (none)")
    return "\n".join(lines)


def _json(
    model: TextModel | None, statuses: list[SceneStatus], receipts: list[BlockReceipt | None]
) -> dict[str, object]:
    return {
        "model": model.identity.label if model is not None else None,
        "scenes": [
            {
                "scene": s.scene,
                "state": s.state,
                "reason": s.reason,
                "retry_at": s.retry_at,
                "description": s.describe(),
            }
            for s in statuses
        ],
        "blocks": [
            {"label": r.label} if r is not None else {"label": None, "unreadable": True}
            for r in receipts
        ],
    }
