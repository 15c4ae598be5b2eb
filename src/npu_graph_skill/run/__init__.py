"""`npu-graph run -- CMD`: run the failing command once, with graph-mode logging on, and come back
with the diagnosis and a bundle that holds every material the Iron Law asks for.

One module per job: `record` (the child's output on disk, bounded), `watch` (a decisive error in the
live output, off the pump's path), `procs` (the job's processes), `child` (spawn, pass-through,
signals), `switches` (which logging variables to set), `bundle` (the run folder, its manifest and
its diagnosis), `pack` (the redacted .tar.gz), `ab` (graph vs eager), `session` (one whole run),
`report` (what the wrapper says), `cli` (the `run` and `bundle` commands).
"""
