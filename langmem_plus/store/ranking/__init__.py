"""The search path: ranker stages, fusion and the spec score, feedback, neighbours, the relevance judgement, explanation."""
