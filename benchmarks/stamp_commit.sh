#!/bin/sh
# Writes the checkout's commit into .suite-commit (git-ignored), for a copy of the working tree that travels
# without its .git (a lent GPU machine): the suite records it as the run's git_commit where git cannot answer.
# "+dirty" marks a tree with uncommitted changes to tracked files. Carry .suite-commit with the tree.
cd "$(dirname "$0")/.." || exit 1
commit=$(git rev-parse HEAD) || exit 1
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then commit="$commit+dirty"; fi
echo "$commit" > .suite-commit && echo "$commit"
