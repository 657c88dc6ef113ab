"""Shapes the migrations share, named once so a table reads as what is particular to it: columns declared as
`name=type`, timestamps, the named primary and foreign keys, an index per column, an event log, columns added
and dropped in a batch.

Each function builds exactly what the migrations spelled out before (names, types, nullability, constraint names
and order), so the DDL they emit is unchanged. Migrations that have run depend on that: never change what a
function here builds; a new shape is a new function.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.types import TypeEngine

ColumnType = TypeEngine[Any] | type[TypeEngine[Any]]


def required(**types: ColumnType) -> list[sa.Column[Any]]:
    """NOT NULL columns, in the order given."""
    return [sa.Column(name, type_, nullable=False) for name, type_ in types.items()]


def optional(**types: ColumnType) -> list[sa.Column[Any]]:
    """Nullable columns, in the order given."""
    return [sa.Column(name, type_) for name, type_ in types.items()]


def timestamps(*names: str, nullable: bool = False) -> list[sa.Column[Any]]:
    return [sa.Column(name, sa.DateTime(timezone=True), nullable=nullable) for name in names]


def primary_key(table: str, *columns: str) -> sa.PrimaryKeyConstraint:
    """The primary key `pk_<table>`, on `id` unless columns are given."""
    return sa.PrimaryKeyConstraint(*(columns or ("id",)), name=f"pk_{table}")


def foreign_key(table: str, column: str, target: str, ondelete: str = "CASCADE") -> sa.ForeignKeyConstraint:
    """`table.column` references `target.id`, named `fk_<table>_<column>_<target>`."""
    return sa.ForeignKeyConstraint([column], [f"{target}.id"], ondelete=ondelete, name=f"fk_{table}_{column}_{target}")


def create_indexes(table: str, *columns: str) -> None:
    """One index per column, named `ix_<table>_<column>`."""
    for column in columns:
        op.create_index(f"ix_{table}_{column}", table, [column])


def drop_indexes(table: str, *columns: str) -> None:
    for column in columns:
        op.drop_index(f"ix_{table}_{column}", table_name=table)


def create_event_log(table: str, owner: sa.Column[Any], target: str) -> None:
    """An event log: the owner's events numbered by `seq`, deleted with their owner (`target`)."""
    op.create_table(
        table,
        owner,
        *required(seq=sa.Integer, type=sa.String(32), data=sa.JSON),
        primary_key(table, owner.name, "seq"),
        foreign_key(table, owner.name, target),
    )


def add_columns(table: str, *columns: sa.Column[Any]) -> None:
    with op.batch_alter_table(table) as batch:
        for column in columns:
            batch.add_column(column)


def drop_columns(table: str, *names: str) -> None:
    with op.batch_alter_table(table) as batch:
        for name in names:
            batch.drop_column(name)
