"""The agent side: recall before the model and keep the turn after it (engine, post-turn worker, middleware, nodes, tools, retriever, context, working memory)."""
