# Commits made without a work tree, for the track demo (scripts/demo-track.sh)
# and the tracking test (t0055): each one is the index file $INDEX (read
# from a parent, then changed with tree_put) written as a commit with a
# fixed author, committer and date, so the same changes give the same
# commit ids on every run, and the lab's builds of them stay cached.
# Sourced; LINUX is the git tree, INDEX a scratch index file.
# shellcheck shell=sh

# tree_read COMMIT: the index starts as COMMIT's tree
tree_read() {
	GIT_INDEX_FILE=$INDEX git -C "$LINUX" read-tree "$1"
}

# tree_put PATH FILE: PATH in the index gets FILE's content
tree_put() {
	_blob=$(git -C "$LINUX" hash-object -w "$2") &&
		GIT_INDEX_FILE=$INDEX git -C "$LINUX" update-index --add --cacheinfo "100644,$_blob,$1"
}

# tree_apply PATCH: the diff PATCH applied to the index
tree_apply() {
	GIT_INDEX_FILE=$INDEX git -C "$LINUX" apply --cached "$1"
}

# tree_commit PARENT EPOCH SUBJECT: prints the id of the index's commit on
# PARENT, dated EPOCH (UTC)
tree_commit() {
	_tree=$(GIT_INDEX_FILE=$INDEX git -C "$LINUX" write-tree) &&
		env GIT_AUTHOR_NAME='A U Thor' GIT_AUTHOR_EMAIL=author@example.org GIT_COMMITTER_NAME='C O Mitter' \
			GIT_COMMITTER_EMAIL=committer@example.org GIT_AUTHOR_DATE="$2 +0000" \
			GIT_COMMITTER_DATE="$2 +0000" git -C "$LINUX" commit-tree "$_tree" -p "$1" -m "$3"
}
