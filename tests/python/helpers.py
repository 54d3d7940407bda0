"""Shared test data, a validator for the JSON Schema subset kvframe serves, and a README block reader."""

from __future__ import annotations

from typing import Any

# A small world in three frames (keyed objects; frame 3 adds an NPC at the end and removes one).
FRAMES = [
    {"world": {"time": "dusk", "weather": "rain", "place": "the village square"},
     "npcs": {"bram": {"job": "blacksmith", "hp": 10, "mood": "calm", "at": "forge"},
              "ada": {"job": "guard", "hp": 7, "mood": "angry", "at": "gate"}},
     "player": {"gold": 40, "hp": 12, "carrying": "a rusty sword"}},
    {"world": {"time": "dusk", "weather": "storm", "place": "the village square"},
     "npcs": {"bram": {"job": "blacksmith", "hp": 4, "mood": "scared", "at": "forge"},
              "ada": {"job": "guard", "hp": 7, "mood": "angry", "at": "gate"}},
     "player": {"gold": 40, "hp": 12, "carrying": "a rusty sword"}},
    {"world": {"time": "night", "weather": "storm", "place": "the village square"},
     "npcs": {"bram": {"job": "blacksmith", "hp": 4, "mood": "scared", "at": "forge"},
              "cleo": {"job": "merchant", "hp": 9, "mood": "greedy", "at": "market"}},
     "player": {"gold": 25, "hp": 12, "carrying": "a rusty sword"}},
]
RULES = {"pin": ["npcs.*"]}

ACTION_SCHEMA = {
    "type": "object",
    "properties": {
        "verb": {"enum": ["attack", "flee", "trade", "talk", "hide"]},
        "target": {"enum": ["player", "bram", "ada", "cleo"]},
        "urgency": {"type": "integer", "minimum": 1, "maximum": 5},
    },
    "required": ["verb", "target", "urgency"],
    "additionalProperties": False,
}


def valid(value: Any, schema: dict) -> bool:
    """Whether ``value`` satisfies ``schema`` (the subset: type, properties, required,
    additionalProperties, enum, const, minimum, maximum, anyOf, items)."""
    if "anyOf" in schema:
        return any(valid(value, s) for s in schema["anyOf"])
    if "const" in schema and value != schema["const"]:
        return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        if not isinstance(value, dict):
            return False
        props = schema.get("properties", {})
        if any(k not in value for k in schema.get("required", [])):
            return False
        if schema.get("additionalProperties") is False and any(k not in props for k in value):
            return False
        return all(valid(value[k], s) for k, s in props.items() if k in value)
    if kind == "integer":
        if not isinstance(value, int) or isinstance(value, bool):
            return False
    if kind == "number" and (not isinstance(value, (int, float)) or isinstance(value, bool)):
        return False
    if kind == "string" and not isinstance(value, str):
        return False
    if kind == "boolean" and not isinstance(value, bool):
        return False
    if "minimum" in schema and value < schema["minimum"]:
        return False
    if "maximum" in schema and value > schema["maximum"]:
        return False
    return True


def run_test_functions(namespace: dict[str, Any]) -> int:
    """Runs a module's test_* functions without pytest (ctest runs some test files as scripts):
    prints ok / FAIL per test, returns the exit status."""
    failed = 0
    for name, test in list(namespace.items()):
        if name.startswith("test_") and callable(test):
            try:
                test()
                print(f"ok   {name}")
            except AssertionError as error:
                failed += 1
                print(f"FAIL {name}: {error}")
    return 1 if failed else 0


def fenced_block(text: str, marker: str, language: str) -> str:
    """The first ```language block after ``marker`` in a Markdown ``text``, as it stands."""
    after = text[text.index(marker):]
    start = after.index(f"```{language}\n") + len(f"```{language}\n")
    return after[start:after.index("```", start)]
