"""job/jvm.py: every write command of ``writes.WRITES`` has a reader of what its JSON loses, or a
reason to need none, and every reader reads a command the table knows."""

from __future__ import annotations

import pytest

from airflow_lineage_provider.job.jvm import _WRITE_READERS, NO_READER
from airflow_lineage_provider.lineage.plan.writes import WRITES


@pytest.mark.parametrize("command", sorted(_WRITE_READERS))
def test_every_reader_reads_a_write_command(command):
    assert command in WRITES, f"job/jvm.py reads {command}, which lineage/plan/writes.py WRITES does not know"


@pytest.mark.parametrize("command", sorted(WRITES))
def test_every_write_command_has_a_reader_or_a_reason(command):
    assert command in _WRITE_READERS or NO_READER.get(command), (
        f"{command} is in lineage/plan/writes.py WRITES but job/jvm.py neither reads it (_WRITE_READERS) "
        f"nor says why it needs no reader (NO_READER)")


def test_a_command_is_read_or_excused_not_both():
    assert not _WRITE_READERS.keys() & NO_READER.keys()
    assert NO_READER.keys() <= WRITES.keys(), sorted(NO_READER.keys() - WRITES.keys())
