"""Validate an OpenAPI document the way pulp-glue 0.41.1 loads it.

Usage: python validate.py DOC.json
Exits 0 and prints the operation count when pulp-glue accepts the document.
Checks: oas.OpenAPISpec.model_validate (strict pydantic model), the parse that
OpenAPI._parse_api performs (openapi 3.x, operations by id), and that the
info carries x-pulp-app-versions and x-pulp-domain-enabled.
"""
import json
import sys

from pulp_glue.common import oas, openapi  # noqa: F401  (openapi: same import path the CLI uses)


def main(path):
    with open(path, "rb") as f:
        raw = json.loads(f.read())
    spec = oas.OpenAPISpec.model_validate(raw)
    if not spec.openapi.startswith("3."):
        sys.exit("unknown schema version %r" % spec.openapi)
    ops = spec.operations
    info = raw["info"]
    if not isinstance(info.get("x-pulp-app-versions"), dict):
        sys.exit("info.x-pulp-app-versions missing")
    if "x-pulp-domain-enabled" not in info:
        sys.exit("info.x-pulp-domain-enabled missing")
    print("ok: openapi %s, %d operations" % (spec.openapi, len(ops)))


if __name__ == "__main__":
    main(sys.argv[1])
