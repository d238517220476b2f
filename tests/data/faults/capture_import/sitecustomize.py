"""Fault injection (tests/integration/test_faults.py): put this directory on PYTHONPATH and the plan
capture cannot be imported in the Spark driver, as a broken install would leave it."""

import sys


class _BrokenCapture:
    def find_spec(self, name, path=None, target=None):
        if name == "airflow_lineage_provider.job.capture":
            raise ImportError("injected: the capture is broken")
        return None


sys.meta_path.insert(0, _BrokenCapture())
