"""Post-turn memory processors (SPEC R-PROC): each runs on a LangChain chat model with
structured output, or offline on Chinese/English rules, and falls back to the rules when the
model fails (the turn is never lost)."""

from langmem_plus.processors.analysis import ProfileWriter, SymbolExtractor, TurnAnalyzer
from langmem_plus.processors.facts.deriver import Derivation, FactDeriver
from langmem_plus.processors.reviewer import Reviewer
from langmem_plus.processors.rewriters import EpisodeMerger, EpisodeSeparator, Reconsolidator
from langmem_plus.processors.schemas import (
    ReviewDecision,
    RollingSummaryOut,
    SymbolInfo,
    TurnAnalysis,
)
from langmem_plus.processors.summarizer import Summarizer

__all__ = [
    "Derivation",
    "EpisodeMerger",
    "EpisodeSeparator",
    "FactDeriver",
    "ProfileWriter",
    "Reconsolidator",
    "ReviewDecision",
    "Reviewer",
    "RollingSummaryOut",
    "Summarizer",
    "SymbolExtractor",
    "SymbolInfo",
    "TurnAnalysis",
    "TurnAnalyzer",
]
