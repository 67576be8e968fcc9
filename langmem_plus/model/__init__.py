"""What every layer passes around: memory records, chat messages, namespaces, the one quoting helper, costs."""
