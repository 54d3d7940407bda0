#!/usr/bin/env python3
"""Every hand-written mirror of the C ABI matches include/kvframe/client/kvframe_client.h.

protocol/options.json, which defines the session's and the query's options
(the C structs keep its order, names and types), the Unity package's C#
structs and enums (P/Invoke reads native memory through them; the params
structs generated from the table), the Python ctypes bench's structs, the Python package's
ErrorCode and the Unreal plugin's UENUMs are copies of the header; a field added there and not here would
shift every field after it without any compiler noticing. This reads the
header and each mirror and compares layouts field by field (as kinds: a
32-bit unsigned, a pointer, ...) and enums value by value.

    python3 tests/adapters/abi_mirrors_test.py [REPO_ROOT]
"""
import ast
import json
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
HEADER = "include/kvframe/client/kvframe_client.h"
UNITY = "adapters/unity/Runtime/Kvframe.Client/"
CTYPES_BENCH = "adapters/python/bench/bench_overhead.py"
PYTHON_ERRORS = "adapters/python/kvframe/errors.py"
UNREAL_ENUMS = "adapters/unreal/Kvframe/Source/Kvframe/Public/KvframeNpcComponent.h"

# The mirrors: (file, its name) -> the header's struct or enum.
CSHARP_STRUCTS = {"ClientParams": "kvf_client_params", "SessionParams": "kvf_session_params",
                  "QueryParams": "kvf_query_params", "ServerInfo": "kvf_server_info",
                  "KvframeReport": "kvf_report", "Value": "kvf_value"}
CSHARP_ENUMS = {"KvframeStatus": "kvf_status", "KvframeMode": "kvf_mode", "KvframeFrameFormat": "kvf_frame_format",
                "KvframeTaskKind": "kvf_task_kind", "KvframeValueType": "kvf_value_type",
                "EventType": "kvf_event_type"}
CTYPES_STRUCTS = {"_ClientParams": "kvf_client_params"}  # _SessionParams: built from the options table
OPTIONS_TABLE = "protocol/options.json"
# The options table's groups -> the header's structs (their fields after struct_size).
TABLE_STRUCTS = {"session": "kvf_session_params", "query": "kvf_query_params"}
TABLE_KINDS = {"string": ["ptr"], "strings": ["ptr", "usize"], "enum": ["i32"], "int32": ["i32"], "uint32": ["u32"],
               "uint64": ["u64"], "float": ["f32"], "bool": ["i32"]}
UNREAL_ENUM_MIRRORS = {"EKvframeFrameFormat": "kvf_frame_format", "EKvframeMode": "kvf_mode"}

C_KINDS = {"uint32_t": "u32", "int32_t": "i32", "uint64_t": "u64", "int64_t": "i64", "float": "f32",
           "double": "f64", "size_t": "usize"}
CSHARP_KINDS = {"uint": "u32", "int": "i32", "ulong": "u64", "long": "i64", "float": "f32", "double": "f64",
                "UIntPtr": "usize", "IntPtr": "ptr"}
CTYPES_KINDS = {"c_uint32": "u32", "c_int32": "i32", "c_int": "i32", "c_uint64": "u64", "c_int64": "i64",
                "c_float": "f32", "c_double": "f64", "c_size_t": "usize", "c_char_p": "ptr", "c_void_p": "ptr"}


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def strip_comments(text):
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))


def header_structs(text):
    structs = {}
    for name, body in re.findall(r"typedef struct (\w+) \{(.*?)\} \1;", text, re.S):
        fields = []
        for declaration in body.split(";"):
            declaration = " ".join(declaration.split())
            if not declaration:
                continue
            match = re.match(r"(.*?)\s*(\w+(?:\[\d+\])?(?:\s*,\s*\w+(?:\[\d+\])?)*)$", declaration)
            assert match, f"{HEADER}: cannot read the field declaration {declaration!r} of {name}"
            type_, names = match.group(1), match.group(2)
            stars = "*" if "*" in type_ else ""
            base = type_.replace("const", "").replace("*", "").strip()
            for field in names.split(","):
                field = field.strip()
                array = re.match(r"(\w+)\[(\d+)\]", field)
                if stars.strip():
                    kind = "ptr"
                elif array and base == "char":
                    kind = f"bytes[{array.group(2)}]"
                elif array:
                    kind = f"{C_KINDS[base]}[{array.group(2)}]"
                elif base.startswith("kvf_"):
                    kind = "i32"  # an enum
                else:
                    kind = C_KINDS[base]
                fields.append(((array.group(1) if array else field), kind))
        structs[name] = fields
    return structs


def enums(text, pattern):
    """{name: {value: member}} of every enum `pattern` finds (groups: the name, the body)."""
    return {name: {int(v): k for k, v in re.findall(r"(\w+)\s*=\s*(-?\d+)", body)}
            for name, body in re.findall(pattern, text, re.S)}


C_ENUM = r"typedef enum (\w+) \{(.*?)\} \1;"
MIRROR_ENUM = r"enum (?:class )?(\w+)(?:\s*:\s*\w+)?\s*\{(.*?)\}"


def csharp_structs(text):
    structs = {}
    for name, body in re.findall(r"\[StructLayout\(LayoutKind\.Sequential\)\]\s*(?:public|internal) struct (\w+)\s*\{(.*?)\n\s*\}", text, re.S):
        fields = []
        for attributes, type_, names in re.findall(
                r"((?:\[[^\]]*\]\s*)*)(?:public|internal|private) (\w+(?:\[\])?) ([\w, ]+);", body):
            for field in names.split(","):
                if type_ == "byte[]":
                    size = re.search(r"SizeConst = (\d+)", attributes)
                    kind = f"bytes[{size.group(1)}]"
                elif type_ == "ulong" and field.strip().startswith("ref"):
                    kind = "u64"
                else:
                    kind = CSHARP_KINDS.get(type_, "i32" if type_.startswith("Kvframe") else type_)
                fields.append((field.strip(), kind))
        structs[name] = fields
    return structs


def ctypes_structs(text):
    structs = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if (isinstance(item, ast.Assign) and getattr(item.targets[0], "id", "") == "_fields_"
                        and isinstance(item.value, ast.List)):  # a literal list, not one built from a table
                    structs[node.name] = [(e.elts[0].value, CTYPES_KINDS[e.elts[1].attr]) for e in item.value.elts]
    return structs


def flatten(fields):
    """Array fields as their elements, so `uint64_t ref[2]` equals two ulongs."""
    out = []
    for _, kind in fields:
        array = re.match(r"(u64|u32|i32|i64)\[(\d+)\]", kind)
        out += [array.group(1)] * int(array.group(2)) if array else [kind]
    return out


def camel(name):
    return "".join(part.capitalize() for part in name.lower().split("_"))


def compare_enum(where, mirror_name, mirror, c_name, c_enum, problems):
    if set(mirror) != set(c_enum):
        problems.append(f"{where} {mirror_name}: values {sorted(mirror)} but {c_name} has {sorted(c_enum)}")
        return
    for value, c_member in c_enum.items():
        # KVF_ERR_STALE_BASE ~ StaleBase, KVF_MODE_FULL ~ Full: the mirror's name ends the C one's.
        if not camel(c_member).endswith(mirror[value]):
            problems.append(f"{where} {mirror_name}.{mirror[value]} = {value} is {c_member} in {c_name}")


def python_error_codes(text):
    """{value: NAME} of adapters/python's ErrorCode (an IntEnum of plain NAME = value lines)."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef) and node.name == "ErrorCode":
            return {item.value.value: item.targets[0].id for item in node.body
                    if isinstance(item, ast.Assign) and isinstance(item.value, ast.Constant)}
    return {}


def compare_python_errors(codes, status, problems):
    """Python's ErrorCode holds every code a server sends (below 200) and the client codes it raises,
    each under kvf_status's value and name (NONE is KVF_OK)."""
    if not codes:
        problems.append(f"{PYTHON_ERRORS}: no ErrorCode")
    for value, member in status.items():
        if value < 200 and value not in codes:
            problems.append(f"Python ErrorCode lacks {member} = {value}")
    for value, name in codes.items():
        want = "KVF_OK" if name == "NONE" else "KVF_ERR_" + name
        if status.get(value) != want:
            problems.append(f"Python ErrorCode.{name} = {value} is {status.get(value)} in kvf_status")


EXIT_HEADER = "include/kvframe/common/exit_codes.h"
EXIT_MIRROR = "bench/exit_codes.py"
EXIT_NAMES = {"kExitOk": "OK", "kExitUsage": "USAGE", "kExitBadInput": "BAD_INPUT", "kExitFailed": "RUN_FAILED",
              "kExitCheckFailed": "CHECK_FAILED"}


def compare_exit_codes(header, mirror, problems):
    """The Python benches' exit codes are the C++ programs' (one convention, docs/tools.md)."""
    cpp = {name: int(value) for name, value in re.findall(r"(kExit\w+) = (\d+)", strip_comments(header))}
    python = {node.targets[0].id: node.value.value for node in ast.parse(mirror).body
              if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)}
    if set(cpp) != set(EXIT_NAMES):
        problems.append(f"{EXIT_HEADER}: ExitCode is {sorted(cpp)}, this test knows {sorted(EXIT_NAMES)}")
    for cpp_name, value in cpp.items():
        name = EXIT_NAMES.get(cpp_name)
        if name and python.get(name) != value:
            problems.append(f"{EXIT_MIRROR}: {name} is {python.get(name)}, {cpp_name} is {value}")


def compare_table(table, c_structs, problems):
    """The C params structs hold the table's options, field for field: name and kind, in order."""
    for group, c_name in TABLE_STRUCTS.items():
        want = [("struct_size", "u32")]
        for option in table[group]["options"]:
            kinds = TABLE_KINDS[option["type"]]
            names = [option["name"], option["name"] + "_count"][:len(kinds)]
            want += list(zip(names, kinds))
        if want != c_structs[c_name]:
            problems.append(f"{OPTIONS_TABLE} {group} {want}\n  != {c_name} {c_structs[c_name]}")


def main():
    header = strip_comments(read(HEADER))
    c_structs, c_enums = header_structs(header), enums(header, C_ENUM)
    problems = []
    compare_table(json.loads(read(OPTIONS_TABLE)), c_structs, problems)

    unity = "".join(strip_comments(read(UNITY + f)) for f in sorted(os.listdir(os.path.join(ROOT, UNITY)))
                    if f.endswith(".cs"))
    for where, mirrors, found in (("C#", CSHARP_STRUCTS, csharp_structs(unity)),
                                  ("ctypes", CTYPES_STRUCTS, ctypes_structs(read(CTYPES_BENCH)))):
        for mirror_name, c_name in mirrors.items():
            if mirror_name not in found:
                problems.append(f"{where}: no struct {mirror_name} (the mirror of {c_name})")
                continue
            mine, theirs = flatten(found[mirror_name]), flatten(c_structs[c_name])
            if mine != theirs:
                problems.append(f"{where} {mirror_name} {found[mirror_name]}\n  != {c_name} {c_structs[c_name]}")

    unreal = strip_comments(re.sub(r"UMETA\([^)]*\)", "", read(UNREAL_ENUMS)))
    for where, mirrors, found in (("C#", CSHARP_ENUMS, enums(unity, MIRROR_ENUM)),
                                  ("Unreal", UNREAL_ENUM_MIRRORS, enums(unreal, MIRROR_ENUM))):
        for mirror_name, c_name in mirrors.items():
            if mirror_name not in found:
                problems.append(f"{where}: no enum {mirror_name} (the mirror of {c_name})")
                continue
            compare_enum(where, mirror_name, found[mirror_name], c_name, c_enums[c_name], problems)

    compare_python_errors(python_error_codes(read(PYTHON_ERRORS)), c_enums["kvf_status"], problems)
    compare_exit_codes(read(EXIT_HEADER), read(EXIT_MIRROR), problems)

    version = re.search(r"BindingsVersion = (\d+);", unity)
    major, minor, patch = (int(re.search(rf"#define KVF_VERSION_{p} (\d+)", header).group(1))
                           for p in ("MAJOR", "MINOR", "PATCH"))
    if not version or int(version.group(1)) != major * 10000 + minor * 100 + patch:
        problems.append(f"C# KvframeClient.BindingsVersion is not KVF_VERSION {major}.{minor}.{patch}")

    checked = len(TABLE_STRUCTS) + len(CSHARP_STRUCTS) + len(CTYPES_STRUCTS) + len(CSHARP_ENUMS) + len(UNREAL_ENUM_MIRRORS) + 2
    if problems:
        print("The C ABI's mirrors differ from " + HEADER + ":\n" + "\n".join(problems), file=sys.stderr)
        return 1
    print(f"{checked} mirrors of {HEADER} match it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
