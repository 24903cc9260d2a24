"""Every tool's input and output schema is standard JSON Schema 2020-12 that models can read.

A keyword outside the standard (pydantic writes ``ge``/``le`` when a bound cannot reach the
integer schema) is silently ignored by validators and never shown to models, so a bound written
that way does not exist for them. Each schema must pass the 2020-12 metaschema, use only its
keywords, and enforce the bounds the argument models enforce.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from memquill import ToolSpec
from memquill.tools import CATALOGUE

_KEYWORD_GROUPS = (
    # core
    "$schema $id $ref $anchor $dynamicRef $dynamicAnchor $vocabulary $comment $defs",
    # applicator and unevaluated
    "prefixItems items contains additionalProperties properties patternProperties "
    "dependentSchemas propertyNames if then else allOf anyOf oneOf not "
    "unevaluatedItems unevaluatedProperties",
    # validation
    "type const enum multipleOf maximum exclusiveMaximum minimum exclusiveMinimum maxLength "
    "minLength pattern maxItems minItems uniqueItems maxContains minContains maxProperties "
    "minProperties required dependentRequired",
    # meta-data, format, content
    "title description default deprecated readOnly writeOnly examples format "
    "contentEncoding contentMediaType contentSchema",
)
KEYWORDS = frozenset(word for group in _KEYWORD_GROUPS for word in group.split())
"""Every keyword of the JSON Schema 2020-12 vocabularies."""
SUBSCHEMA = frozenset({"items", "contains", "additionalProperties", "propertyNames", "not"})
SUBSCHEMA |= {"if", "then", "else", "contentSchema", "unevaluatedItems", "unevaluatedProperties"}
SUBSCHEMA_LISTS = frozenset({"prefixItems", "allOf", "anyOf", "oneOf"})
SUBSCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas"})

SCHEMAS = [
    pytest.param(spec, kind, id=f"{spec.name}-{kind}")
    for spec in CATALOGUE
    for kind in ("input", "output")
]


def schema_of(spec: ToolSpec, kind: str) -> dict[str, Any]:
    return spec.input_schema() if kind == "input" else spec.output_schema()


def subschemas(schema: Any, where: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object inside ``schema`` (itself included), with its JSON pointer."""
    if not isinstance(schema, dict):
        return  # ``true``/``false`` schemas have no keywords
    yield where, schema
    for key, value in schema.items():
        if key in SUBSCHEMA:
            yield from subschemas(value, f"{where}/{key}")
        elif key in SUBSCHEMA_LISTS:
            for index, item in enumerate(value):
                yield from subschemas(item, f"{where}/{key}/{index}")
        elif key in SUBSCHEMA_MAPS:
            for name, item in value.items():
                yield from subschemas(item, f"{where}/{key}/{name}")


@pytest.mark.parametrize(("spec", "kind"), SCHEMAS)
def test_the_schema_is_valid_json_schema_2020_12(spec: ToolSpec, kind: str) -> None:
    Draft202012Validator.check_schema(schema_of(spec, kind))


@pytest.mark.parametrize(("spec", "kind"), SCHEMAS)
def test_the_schema_uses_only_standard_keywords(spec: ToolSpec, kind: str) -> None:
    unknown = [
        f"{where}: {key}"
        for where, schema in subschemas(schema_of(spec, kind))
        for key in schema
        if key not in KEYWORDS
    ]
    assert unknown == [], f"{spec.name} {kind} schema has non-standard keywords"


def test_the_walk_reaches_every_nested_schema() -> None:
    # The keyword check is only as good as the walk: a planted keyword deep inside is found.
    planted = {"$defs": {"A": {"anyOf": [{"items": {"ge": 1}}]}}, "properties": {"ge": {}}}
    found = [(where, key) for where, schema in subschemas(planted) for key in schema]
    assert ("#/$defs/A/anyOf/0/items", "ge") in found
    assert ("#/properties/ge", "ge") not in found  # a property *named* ge is fine


BOUNDS = [
    ("memory_search", {"query": "q", "limit": 1}, {"query": "q", "limit": 21}),
    ("memory_search", {"query": "q", "limit": 20}, {"query": "q", "limit": 0}),
    ("memory_get", {"file_path": "a.md", "line_start": 1}, {"file_path": "a.md", "line_start": 0}),
    ("memory_get", {"file_path": "a.md", "line_end": 1}, {"file_path": "a.md", "line_end": 0}),
    ("memory_get", {"file_path": "a.md", "char_start": 0}, {"file_path": "a.md", "char_start": -1}),
    (
        "memory_get",
        {"file_path": "a.md", "char_start": 512 * 1024},
        {"file_path": "a.md", "char_start": 512 * 1024 + 1},
    ),
    ("memory_recent", {"days": 7}, {"days": 8}),
    ("memory_recent", {"days": 1}, {"days": 0}),
]


@pytest.mark.parametrize(("name", "inside", "outside"), BOUNDS)
def test_a_validator_sees_the_same_bounds_as_the_argument_model(
    name: str, inside: dict[str, Any], outside: dict[str, Any]
) -> None:
    spec = next(spec for spec in CATALOGUE if spec.name == name)
    validator = Draft202012Validator(spec.input_schema())
    assert validator.is_valid(inside)
    assert not validator.is_valid(outside), f"{name}: the schema does not bound {outside}"
    spec.args.model_validate(inside)
    with pytest.raises(ValueError, match="Input should be"):
        spec.args.model_validate(outside)


@pytest.mark.parametrize("name", ["memory_search", "memory_recent"])
def test_booleans_are_still_not_numbers(name: str) -> None:
    spec = next(spec for spec in CATALOGUE if spec.name == name)
    field = "limit" if name == "memory_search" else "days"
    with pytest.raises(ValueError, match="valid integer"):
        spec.args.model_validate({"query": "q", field: True})
