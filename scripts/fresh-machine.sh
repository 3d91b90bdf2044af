#!/usr/bin/env bash
# The README's test command on a machine as CI gets it new: a clone of this checkout's HEAD
# (committed work only), `npm ci && npm test` run by a user who is not root, with empty npm, Go
# and pip caches under a temporary HOME, and a PATH without the tools that only root installs
# (Chromium, podman, runc, debootstrap) or that the checks must fetch themselves (promtool,
# oasdiff, hadolint). It shows that every step either sets itself up into .cache/ or is skipped
# with one line, and how long a first run takes.
#
# Usage (as root: it creates the user subsvc-fresh when missing; not root: it runs as you):
#   bash scripts/fresh-machine.sh                   npm ci && npm test (20 minutes or more on 2 cores)
#   FRESH_ONLY_CHECK=1 bash scripts/fresh-machine.sh   npm ci && npm run check only
#   FRESH_KEEP=1 ...                                keeps the temporary directory (its path is printed)
set -euo pipefail
source_repo="$(cd "$(dirname "$0")/.." && pwd)"
commit="$(git -C "$source_repo" rev-parse HEAD)"
work="$(mktemp -d /tmp/subsvc-fresh.XXXXXX)"
chmod 755 "$work"
echo "fresh machine: $commit in $work"

cleanup() {
  if [ "${FRESH_KEEP:-}" = 1 ]; then
    echo "fresh machine: kept $work"
  else
    chmod -R u+w "$work" 2>/dev/null || true
    rm -rf "$work"
  fi
}
trap cleanup EXIT

# A worktree's clone would check out the main repository's HEAD: check out this one's commit.
git clone --quiet --no-checkout "$source_repo" "$work/repo"
git -C "$work/repo" checkout --quiet --detach "$commit"
mkdir -p "$work/home" "$work/go" "$work/go-build" "$work/npm-cache" "$work/pip-cache" "$work/bin"

# The machine's own tools, less those a new machine lacks: a directory of links, since the
# machine's /usr/bin may hold them from earlier sessions.
absent=" chromium chromium-browser promtool prometheus podman runc crun docker debootstrap hadolint oasdiff "
for dir in /usr/local/go/bin /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
  [ -d "$dir" ] || continue
  for tool in "$dir"/*; do
    name="${tool##*/}"
    case "$absent" in *" $name "*) continue ;; esac
    [ -e "$work/bin/$name" ] || ln -s "$tool" "$work/bin/$name"
  done
done

run_as=()
if [ "$(id -u)" = 0 ]; then
  user=subsvc-fresh
  id -u "$user" >/dev/null 2>&1 || useradd --no-create-home --home-dir "$work/home" --shell /bin/bash "$user"
  chown -R "$user:" "$work"
  run_as=(runuser -u "$user" --)
fi

# The environment of a new machine: its CA bundle and pip settings pass; nothing of this session's.
env_vars=(
  HOME="$work/home" PATH="$work/bin" LANG=C.UTF-8 TERM=dumb CI="${CI:-}"
  GOPATH="$work/go" GOMODCACHE="$work/go/pkg/mod" GOCACHE="$work/go-build"
  npm_config_cache="$work/npm-cache" PIP_CACHE_DIR="$work/pip-cache"
  CHROMIUM_PATH="$work/no-chromium"
)
for name in SSL_CERT_FILE SSL_CERT_DIR NODE_EXTRA_CA_CERTS REQUESTS_CA_BUNDLE PIP_CERT PIP_FIND_LINKS PIP_DEFAULT_TIMEOUT \
  http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
  [ -n "${!name:-}" ] && env_vars+=("$name=${!name}")
done

step() {
  local started
  started=$(date +%s)
  echo "fresh machine: $*"
  local status=0
  (cd "$work/repo" && "${run_as[@]}" env -i "${env_vars[@]}" bash -c "$*") || status=$?
  echo "fresh machine: '$*' took $(($(date +%s) - started)) s (exit $status)"
  return "$status"
}

step 'npm ci'
if [ "${FRESH_ONLY_CHECK:-}" = 1 ]; then
  step 'npm run check'
else
  step 'npm test'
fi
