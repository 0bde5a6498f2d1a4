"""What a run runs here: the name and tag filters (`filters`), the variants, what changed since a
ref (`since`: which commit, the files changed; `affected`: which scenarios they touch;
`changed`: the plans kept and the report's block), and this machine's shard (`steps`)."""
