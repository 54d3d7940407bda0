"""Frame deltas: the patch that turns one game state into the next.

kvframe takes a frame whole, as an RFC 7386 merge patch or as an RFC 6902
JSON Patch against the session's previous frame (:class:`~kvframe.FrameFormat`).
These helpers compute either from two states (parsed JSON: dicts, lists,
strings, numbers, booleans, None) so that the server's document after the
patch is exactly the new state, key order included (the order is the block
order the model sees). When a patch cannot promise that they return None and
the caller sends the state whole:

- a merge patch cannot set a value to ``null`` (``null`` deletes the key),
- a key the patch adds goes last in its object on the server, so a new
  state that puts a new key elsewhere (or reorders keys) needs a whole frame,
- the root must be an object (merge patch) or the same container type (JSON Patch).

Arrays are replaced whole when their length changes (merge patches always
replace arrays whole): lay state out as objects keyed by id, not arrays, and
unchanged parts stay out of the patch (docs/json_blocker.md).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

__all__ = ["merge_patch", "json_patch", "apply_merge_patch", "same_json"]

_MISSING = object()


def same_json(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` serialize to the same JSON: types (``1`` is not ``1.0``
    nor ``true``) and object key order count."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        if len(a) != len(b) or list(a) != list(b):
            return False
        return all(same_json(v, b[k]) for k, v in a.items())
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return a == b


def _has_null_in_objects(value: Any) -> bool:
    """A null that a merge patch would drop (inside objects; nulls in arrays are kept)."""
    if isinstance(value, dict):
        return any(v is None or _has_null_in_objects(v) for v in value.values())
    return False


def _order_after_patch(old: Dict[str, Any], new: Dict[str, Any]) -> bool:
    """Whether patching ``old`` member-wise leaves the keys in ``new``'s order: kept keys
    stay where they were, added keys go last (nlohmann ordered_json)."""
    kept = [k for k in old if k in new]
    added = [k for k in new if k not in old]
    return kept + added == list(new)


def merge_patch(old: Any, new: Any) -> Optional[Dict[str, Any]]:
    """The RFC 7386 merge patch turning ``old`` into ``new`` ({} when they are the same),
    or None when no merge patch gives exactly ``new`` (see the module docstring)."""
    if not isinstance(old, dict) or not isinstance(new, dict) or not _order_after_patch(old, new):
        return None
    patch: Dict[str, Any] = {}
    for key in old:
        if key not in new:
            patch[key] = None
    for key, value in new.items():
        if value is None:
            return None
        before = old.get(key, _MISSING)
        if before is not _MISSING and same_json(before, value):
            continue
        if isinstance(before, dict) and isinstance(value, dict):
            sub = merge_patch(before, value)
            if sub is None:
                return None
            patch[key] = sub
        else:
            if _has_null_in_objects(value):
                return None
            patch[key] = value
    return patch


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 MergePatch(target, patch): a new value (inputs are not changed)."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = apply_merge_patch(result.get(key), value)
    return result


def _pointer(parent: str, key: Any) -> str:
    return parent + "/" + str(key).replace("~", "~0").replace("/", "~1")


def _diff(old: Any, new: Any, path: str, ops: List[Dict[str, Any]]) -> bool:
    if isinstance(old, dict) and isinstance(new, dict):
        if not _order_after_patch(old, new):
            if not path:
                return False
            ops.append({"op": "replace", "path": path, "value": new})
            return True
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": _pointer(path, key)})
        for key, value in new.items():
            if key not in old:
                ops.append({"op": "add", "path": _pointer(path, key), "value": value})
            elif not same_json(old[key], value):
                _diff(old[key], value, _pointer(path, key), ops)
        return True
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new)):
            if not same_json(a, b):
                _diff(a, b, _pointer(path, i), ops)
        return True
    if not path:
        return False  # the root changes type or length: send it whole
    ops.append({"op": "replace", "path": path, "value": new})
    return True


def json_patch(old: Any, new: Any) -> Optional[List[Dict[str, Any]]]:
    """The RFC 6902 JSON Patch (``add`` / ``remove`` / ``replace`` ops) turning ``old`` into
    ``new`` ([] when they are the same), or None when the root itself would be replaced."""
    ops: List[Dict[str, Any]] = []
    return ops if _diff(old, new, "", ops) else None
