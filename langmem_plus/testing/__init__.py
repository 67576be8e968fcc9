"""Test helpers for LangGraph stores: `BaseStoreConformance`, a reusable conformance suite.

Needs pytest (a test dependency, not a runtime one): import it only from tests.
"""

from langmem_plus.testing.conformance import GAPS, BaseStoreConformance

__all__ = ["GAPS", "BaseStoreConformance"]
