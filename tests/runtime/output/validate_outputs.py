#!/usr/bin/python3
"""Checks (schema, output) pairs with an independent validator.

    validate_outputs.py PAIRS.jsonl

Each line: {"schema": <JSON Schema>, "output": "<the generated text>"}. The
output must parse as JSON and validate under Draft 7 (python3-jsonschema,
installed by scripts/setup.sh). Exit 0 when all do; 1 at the first that
does not, printing it; 2 on usage or setup errors.
"""
import json
import sys


def uses_format(schema):
    if isinstance(schema, dict):
        return "format" in schema or any(uses_format(v) for v in schema.values())
    if isinstance(schema, list):
        return any(uses_format(v) for v in schema)
    return False


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        from jsonschema import Draft7Validator
    except ImportError:
        print("validate_outputs.py: needs python3-jsonschema (scripts/setup.sh installs it)", file=sys.stderr)
        return 2
    checked = 0
    with open(sys.argv[1], encoding="utf-8") as pairs:
        for number, line in enumerate(pairs, 1):
            pair = json.loads(line)
            schema, output = pair["schema"], pair["output"]
            problem = None
            if uses_format(schema):
                problem = "the schema uses `format`, which Draft7Validator does not check by default"
            else:
                try:
                    Draft7Validator.check_schema(schema)
                    value = json.loads(output)
                    errors = sorted(Draft7Validator(schema).iter_errors(value), key=str)
                    if errors:
                        problem = errors[0].message
                except Exception as error:  # a bad schema or unparsable output: report it as the failure
                    problem = f"{type(error).__name__}: {error}"
            if problem:
                print(f"line {number}: INVALID: {problem}\n  schema: {json.dumps(schema)}\n  output: {output!r}")
                return 1
            checked += 1
    print(f"validate_outputs.py: {checked} outputs valid")
    return 0 if checked else 1


if __name__ == "__main__":
    sys.exit(main())
