"""The parity kit over the OpenAI Agents adapter: every case through ``FunctionTool``.

Each call goes through ``on_invoke_tool`` with the arguments as JSON text
(:class:`memquill_openai_agents.OpenAIAgentsHarness`), compared with the core. The SDK sends a
function tool's schema in strict mode, so the catalogue is compared with the core's schema made
strict by the SDK's own ``ensure_strict_json_schema``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.strict_schema import ensure_strict_json_schema

from memquill.testing import ParitySuite
from memquill.testing._runner import HarnessFactory
from memquill_openai_agents import OpenAIAgentsHarness


class TestOpenAIAgentsParity(ParitySuite):
    def harness_factory(self) -> HarnessFactory:
        return OpenAIAgentsHarness

    def sent_schema(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        return ensure_strict_json_schema(dict(schema))
