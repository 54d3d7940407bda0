"""The session's and the query's options, as protocol/options.json defines them.

The table is copied into the package at build time (setup.py, beside the
protocol code flatc generates), so the client checks, encodes and documents
exactly the options the server and the native client were built with: a new
one there is a keyword of :meth:`kvframe.Client.open_session` here, with
nothing written for it in Python.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from .messages import Mode, TaskKind


@dataclass(frozen=True)
class Option:
    """One row of the table: a field of OpenSession or Query (and of kvf_session_params, kvf_query_params)."""

    name: str
    type: str                 # string, strings, enum, int32, uint32, uint64, float or bool
    default: Any              # None: an empty string
    doc: str
    wire: str                 # the field's path in the wire table ("sampling.top_k")
    enum: Optional[str] = None  # an enum's type in the schema ("AttentionMode"); its default is a member's name
    knob: Optional[Dict[str, Any]] = None  # a fidelity knob's engine range and flag: -1 asks for the server's default

    @property
    def python_default(self) -> Any:
        return "" if self.default is None else self.default

    @property
    def wire_default(self) -> Any:
        """The default as the client keeps it: an enum's member, a list as a tuple."""
        if self.enum:
            return _member(self.enum, self.default)
        if self.type == "strings":
            return tuple(self.default)
        return self.python_default

    def check(self, value: Any) -> Any:
        """`value` as the wire takes it (None: the default), or ValueError (TypeError) saying what it takes."""
        if value is None:
            return self.wire_default
        if self.enum:
            members = _ENUMS[self.enum]
            if isinstance(value, bool) or int(value) not in members._value2member_map_:
                raise ValueError(f"{self.name} {value!r} is not a kvframe.{members.__name__} "
                                 f"({', '.join(m.name for m in members)})")
            return members(int(value))
        if self.type == "strings":
            values = (value,) if isinstance(value, str) else tuple(value)
            if not all(isinstance(v, str) for v in values):
                raise TypeError(f"{self.name} takes str values")
            return values
        if self.type == "string":
            if not isinstance(value, str):
                raise TypeError(f"{self.name} takes a str ({self.doc})")
            return value
        if self.type == "bool":
            return bool(value)
        number = float(value) if self.type == "float" else int(value)
        if self.knob is not None:
            lo, hi = self.knob["min"], self.knob.get("wire_max", self.knob["max"])
            if number != -1 and not (number >= lo and (hi is None or number <= hi)):  # NaN is in no range
                span = f"{lo} .. {hi}" if hi is not None else f">= {lo}"
                raise ValueError(f"{self.name} takes {span} ({self.knob['off']}), or -1 for the server's default")
        elif self.type.startswith("uint") and number < 0:
            raise ValueError(f"{self.name} must be >= 0 ({self.doc})")
        return number


_ENUMS = {"AttentionMode": Mode, "TaskKind": TaskKind}
"""The schema's enums the options take, as the client's IntEnums."""


def _member(enum: str, name: str) -> Any:
    """An enum's member as the schema names it ("NpcAction": TaskKind.NPC_ACTION)."""
    return _ENUMS[enum]["".join("_" + c if c.isupper() and i else c for i, c in enumerate(name)).upper()]


def _load() -> Dict[str, Any]:
    with open(Path(__file__).resolve().parent / "protocol" / "options.json", encoding="utf-8") as f:
        return json.load(f)


def _options(group: Dict[str, Any]) -> Tuple[Option, ...]:
    return tuple(Option(o["name"], o["type"], o["default"], o["doc"], o.get("wire", o["name"]),
                        enum=o.get("wire_enum"), knob=o.get("knob"))
                 for o in group["options"])


_TABLE = _load()
SESSION: Tuple[Option, ...] = _options(_TABLE["session"])
"""OpenSession's fields, in kvf_session_params' order."""
QUERY: Tuple[Option, ...] = _options(_TABLE["query"])
"""Query's fields, in kvf_query_params' order."""


def docs(options: Tuple[Option, ...]) -> str:
    """The options as a docstring's argument list."""
    return "\n".join(f"    {o.name}: {o.doc}." for o in options)
