"""Row models, parquet schemas, JSON Schemas and card tables come from one source."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pydantic import BaseModel

from termgrade.builders.card import field_table
from termgrade.builders.row_buffer import rows_to_table
from termgrade.builders.rows import schema_for
from termgrade.validate.rows_check import KEYS
from termgrade.validate.schemas import SCHEMAS, render, stale_schemas

ROW_MODELS = {name: SCHEMAS[name] for name in KEYS}
"""The row schemas a parquet file may name."""
SCHEMA_MODELS = {name: model for name, model in SCHEMAS.items()
                 if name.endswith("_row") or name in ("trial", "label", "split")}
"""The schemas the builders' and records' registries held (the cards document them)."""


@pytest.mark.parametrize("name", sorted(ROW_MODELS))
def test_arrow_schema_has_the_models_fields_in_order(name: str) -> None:
    model = ROW_MODELS[name]
    schema = schema_for(model)
    assert schema.names == list(model.model_fields)
    assert schema.metadata[b"termgrade.row_schema"] == name.encode()


@pytest.mark.parametrize("name", sorted(SCHEMA_MODELS))
def test_schemas_dir_is_current(name: str) -> None:
    assert f"{name}.schema.json" not in stale_schemas(), "run `termgrade schemas`"
    assert '"description"' in render(name, SCHEMA_MODELS[name])


@pytest.mark.parametrize("name", sorted(SCHEMA_MODELS))
def test_every_field_is_documented_in_the_card_table(name: str) -> None:
    model: type[BaseModel] = SCHEMA_MODELS[name]
    table = field_table(model)
    for field, info in model.model_fields.items():
        assert info.description, f"{name}.{field} has no description"
        assert f"| `{field}` |" in table


def test_large_payload_columns_use_64_bit_offsets() -> None:
    sft = schema_for(SCHEMAS["trajectory_sft_row"])
    content = sft.field("messages").type.value_type.field("content")
    assert content.type == pa.large_string()
    assert schema_for(SCHEMAS["env_task_row"]).field("archive").type == pa.large_binary()
    assert schema_for(SCHEMAS["env_task_row"]).field("n_assertions").type == pa.int32()


def test_rows_to_table_refuses_nulls_in_required_columns() -> None:
    schema = schema_for(SCHEMAS["label"])
    row = {"task_id": None, "model": "m", "scaffold": "s", "pass_rate": None, "band": None,
           "n_counted": 0, "k": 8, "n_passed": 0, "split": None, "task_digest": None,
           "scaffold_digest": None, "attested": None, "schema_version": "1.0"}
    with pytest.raises(ValueError, match="task_id is not nullable"):
        rows_to_table([row], schema)
    assert rows_to_table([{**row, "task_id": "t"}], schema).num_rows == 1
