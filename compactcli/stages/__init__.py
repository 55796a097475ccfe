"""The stages of compaction and the pipeline that runs them.

A stage is a function from a `Transcript` and its options (plus what it needs to count tokens or
write a summary) to a `Transcript`: the result, or the input unchanged, with the stage's
`compactcli.stats.StageStats` appended, whose `result` is the stage's typed result and whose
`details` is the JSON written from it. `prune` clears old tool output, `summarize` replaces the
old middle of a conversation with a summary (where it may cut: `cuts`), and `compact` folds prune,
summarize and a check over a transcript. No stage imports a format package: each asks
`compactcli.formats` for the transcript's dialect and `compactcli.injection` for its writer.
"""
