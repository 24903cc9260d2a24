"""The documented regeneration command writes exactly what the core produces, and nothing else."""

from __future__ import annotations

import tomllib

from hypothesis import given, settings, strategies as st

from memquill.testing.regenerate import main, regenerate_file, toml_text


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60))
def test_any_text_round_trips_through_the_toml_writer(value: str) -> None:
    assert tomllib.loads(f'v = """\n{toml_text(value)}"""')["v"] == value


def test_only_the_text_bodies_change() -> None:
    source = (
        '# comment kept\n[[case]]\nid = "a"\n\n[[case.step]]\ntool = "memory_get"\n'
        'args = { file_path = "x" }\ntext = """\nold "quoted" text\n"""\n\n'
        '[[case.step]]\naction = "plan_mode_on"\n\n'
        '[[case.step]]\ntool = "memory_search"\ncontains = ["kept"]\n\n'
        '[[case]]\nid = "b"\n\n[[case.step]]\ntool = "memory_search"\ntext = """\nstale"""\n'
    )
    updated = regenerate_file(source, [["new \\ text\nline two", None, "ignored"], ['ends "']])
    assert updated == source.replace(
        'text = """\nold "quoted" text\n"""', 'text = """\nnew \\\\ text\nline two"""'
    ).replace('text = """\nstale"""', 'text = """\nends \\""""')
    parsed = tomllib.loads(updated)["case"]
    assert parsed[0]["step"][0]["text"] == "new \\ text\nline two"
    assert parsed[0]["step"][2] == {"tool": "memory_search", "contains": ["kept"]}
    assert parsed[1]["step"][0]["text"] == 'ends "'


def test_the_committed_expected_texts_are_current() -> None:
    assert main(["--check"]) == 0
