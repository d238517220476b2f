"""Validate OpenLineage events offline against the official JSON schemas.

The schemas are copies in ``tests/data/openlineage-spec`` (see its SOURCE.txt) plus the
provider's own facet schema; a ``referencing`` Registry maps each file's ``$id`` to it,
so nothing is fetched. Every event is validated against ``OpenLineage.json``, and every
facet in it against the schema its ``_schemaURL`` names.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource

from tests.conftest import DATA, ROOT

SPEC_DIR = DATA / "openlineage-spec"
PROVIDER_SCHEMAS = ROOT / "airflow_lineage_provider" / "openlineage" / "schemas"
EVENT_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json"


def schema_files() -> list[Path]:
    return sorted(SPEC_DIR.glob("*.json")) + sorted(PROVIDER_SCHEMAS.glob("*.json"))


def registry() -> Registry:
    resources = []
    for path in schema_files():
        contents = json.loads(path.read_text(encoding="utf-8"))
        resources.append((contents["$id"], Resource.from_contents(contents)))
    return Registry().with_resources(resources)


def facets(event: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(where, key, facet) of every facet of a run event."""
    for key, facet in (event.get("run", {}).get("facets") or {}).items():
        yield "run", key, facet
    for key, facet in (event.get("job", {}).get("facets") or {}).items():
        yield "job", key, facet
    for side, extra in (("inputs", "inputFacets"), ("outputs", "outputFacets")):
        for dataset in event.get(side) or []:
            where = f"{side}[{dataset['namespace']}:{dataset['name']}]"
            for group in ("facets", extra):
                for key, facet in (dataset.get(group) or {}).items():
                    yield f"{where}.{group}", key, facet


def _validator(schema: dict[str, Any], reg: Registry) -> Draft202012Validator:
    return Draft202012Validator(schema, registry=reg, format_checker=Draft202012Validator.FORMAT_CHECKER)


def validate_event(event: dict[str, Any], reg: Registry) -> list[str]:
    """Raise ``jsonschema.ValidationError`` (or ``LookupError``) unless the event and all its facets
    are valid; return the ``_schemaURL`` of every facet checked."""
    _validator({"$ref": EVENT_SCHEMA}, reg).validate(event)
    checked = []
    for where, key, facet in facets(event):
        url = facet["_schemaURL"]
        document = url.split("#", 1)[0]
        try:
            root = reg.contents(document)
        except NoSuchResource:
            raise LookupError(f"no schema for facet {where}.{key}: {url} (add it to {SPEC_DIR})") from None
        _validator({"$ref": url}, reg).validate(facet)
        if document != EVENT_SCHEMA:
            # A facet file names its standard key: the facet must sit under that key.
            assert key in root.get("properties", {}), f"{where}.{key}: {url} defines {list(root.get('properties', {}))}"
            _validator({"$ref": document}, reg).validate({key: facet})
        checked.append(url)
    return checked
