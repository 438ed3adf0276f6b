"""Validates the objects `helm template` rendered, for npm run helm:check.

Reads a multi-document YAML stream on stdin and checks every object:
  - Kubernetes' own kinds against Kubernetes' OpenAPI schemas of each release given (kubernetes-validate,
    strict: a field the API does not know is an error, as `kubectl apply --validate=strict` would say);
  - kinds of a CustomResourceDefinition in the directory given (KEDA's) against that CRD's
    openAPIV3Schema for the object's version, closed the same way (a field the schema does not declare
    is an error, unless it preserves unknown fields).
Prints one JSON object on stdout: {"objects": [...], "errors": [{"object", "message"}]}; exits 0 either
way (the caller decides), 2 on bad arguments or input that is not YAML.

  python validate_objects.py --kubernetes 1.33.0,1.37.0 --crds DIR < rendered.yaml
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import jsonschema
import kubernetes_validate
import yaml


def closed(schema: dict) -> dict:
    """The CRD schema with additionalProperties false wherever it declares properties."""
    result = dict(schema)
    if "properties" in schema:
        result["properties"] = {
            name: closed(child) for name, child in schema["properties"].items()
        }
        preserves = schema.get("x-kubernetes-preserve-unknown-fields") is True
        if "additionalProperties" not in schema and not preserves:
            result["additionalProperties"] = False
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            result[key] = closed(schema[key])
    for key in ("allOf", "anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            result[key] = [closed(child) for child in schema[key]]
    return result


def load_crds(directory: Path) -> dict[tuple[str, str], dict]:
    """(apiVersion, kind) -> the closed schema of that version, for every CRD in the directory."""
    schemas: dict[tuple[str, str], dict] = {}
    for path in sorted(directory.glob("*.yaml")):
        for crd in yaml.safe_load_all(path.read_text()):
            if not crd or crd.get("kind") != "CustomResourceDefinition":
                continue
            spec = crd["spec"]
            for version in spec["versions"]:
                schema = version.get("schema", {}).get("openAPIV3Schema")
                if schema:
                    key = (f"{spec['group']}/{version['name']}", spec["names"]["kind"])
                    schemas[key] = closed(schema)
    return schemas


def describe(obj: dict) -> str:
    return f"{obj.get('kind')}/{obj.get('metadata', {}).get('name')}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--kubernetes", required=True, help="comma-separated Kubernetes releases"
    )
    parser.add_argument(
        "--crds", required=True, type=Path, help="directory of CRD YAML files"
    )
    args = parser.parse_args()
    versions = [version for version in args.kubernetes.split(",") if version]
    if not versions or not args.crds.is_dir():
        print("--kubernetes needs a release and --crds a directory", file=sys.stderr)
        return 2
    crds = load_crds(args.crds)
    try:
        objects = [obj for obj in yaml.safe_load_all(sys.stdin.read()) if obj]
    except yaml.YAMLError as error:
        print(f"the rendered output is not YAML: {error}", file=sys.stderr)
        return 2
    errors: list[dict[str, str]] = []
    for obj in objects:
        name = describe(obj)
        crd_schema = crds.get((obj.get("apiVersion", ""), obj.get("kind", "")))
        if crd_schema is not None:
            validator = jsonschema.Draft7Validator(crd_schema)
            for error in validator.iter_errors(obj):
                path = ".".join(str(part) for part in error.absolute_path)
                errors.append(
                    {
                        "object": name,
                        "message": f"CRD schema: {path or '(root)'}: {error.message}",
                    }
                )
            continue
        for version in versions:
            try:
                kubernetes_validate.validate(obj, version, strict=True)
            except kubernetes_validate.ValidationError as error:
                path = ".".join(str(part) for part in error.path)
                errors.append(
                    {
                        "object": name,
                        "message": f"Kubernetes {version}: {path or '(root)'}: {error.message}",
                    }
                )
            except kubernetes_validate.SchemaNotFoundError:
                errors.append(
                    {
                        "object": name,
                        "message": f"Kubernetes {version} has no schema for {obj.get('apiVersion')} {obj.get('kind')}",
                    }
                )
    json.dump({"objects": objects, "errors": errors}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
