"""Split one selection over several CI machines (`--shard i/n`) and join it back (`merge`)."""
