"""Post-turn memory processors (SPEC R-PROC): each runs on a LangChain chat model with
structured output, or offline on Chinese/English rules, and falls back to the rules when the
model fails (the turn is never lost)."""

from langmem_plus.processors.analysis import ProfileWriter, SymbolExtractor, TurnAnalyzer
from langmem_plus.processors.apply import ApplyResult, aapply_ops, apply_ops, plan_ops
from langmem_plus.processors.facts.deriver import Derivation, FactDeriver
from langmem_plus.processors.monitor import KnowledgeMonitor, WriteDecider
from langmem_plus.processors.reviewer import Reviewer
from langmem_plus.processors.rewriters import (
    EpisodeMerger,
    EpisodeSeparator,
    Reconsolidator,
    SemanticWriter,
)
from langmem_plus.processors.schemas import (
    MemoryOp,
    ReviewDecision,
    RollingSummaryOut,
    SemanticExtraction,
    SemanticFact,
    SymbolInfo,
    TurnAnalysis,
    WriteDecision,
)
from langmem_plus.processors.summarizer import Summarizer

__all__ = [
    "ApplyResult",
    "Derivation",
    "EpisodeMerger",
    "EpisodeSeparator",
    "FactDeriver",
    "KnowledgeMonitor",
    "MemoryOp",
    "ProfileWriter",
    "Reconsolidator",
    "ReviewDecision",
    "Reviewer",
    "RollingSummaryOut",
    "SemanticExtraction",
    "SemanticFact",
    "SemanticWriter",
    "Summarizer",
    "SymbolExtractor",
    "SymbolInfo",
    "TurnAnalysis",
    "TurnAnalyzer",
    "WriteDecider",
    "WriteDecision",
    "aapply_ops",
    "apply_ops",
    "plan_ops",
]
