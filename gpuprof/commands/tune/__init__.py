"""`gpuprof tune`: a joint search over the settings gpuprof can apply inside a program (DataLoader
arguments, the training process's threads, and on request settings that change numerics), then a
patch that writes the best combination where it lives in the user's files, and a check of it.

knobs (what is searched and why each is safe or not), program (the baseline report read as facts),
candidates and search (the plan, pure), measuring (try's runner driven round by round), outcome and
text (the `gpuprof.tune/1` record and its renderings), loader_edit, script_edit, patch and diff (the
patch, with libcst), git_tree and mirror (where it may be applied or tried), check (the patched
program against the unchanged one)."""
