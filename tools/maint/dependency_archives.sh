#!/usr/bin/env bash
# Puts the pinned archives of cmake/Dependencies.cmake into a folder, each with its pinned SHA256,
# for a machine without network: configure there with -DREDUCE_DEPENDENCY_ARCHIVES=<folder>.
#
#   tools/maint/dependency_archives.sh FOLDER [PACKAGE...]
#   PACKAGE: GTest benchmark nlohmann_json fmt CLI11 tomlplusplus (default: the grader's four,
#     nlohmann_json fmt CLI11 tomlplusplus, the ones a machine with GoogleTest and Google
#     Benchmark installed still lacks; "all": the six)
#   env GIT_MIRRORS: a folder of git clones of the libraries, OWNER+NAME or OWNER+NAME/repo
#     (fmtlib+fmt for github.com/fmtlib/fmt), used where the URL cannot be reached: GitHub's tag
#     archive is `git archive --format=tar --prefix=NAME-TAG/ TAG | gzip -cn`, the same bytes
#     (checked: the four grader libraries' archives made so have the pinned hashes).
#
# An archive already in FOLDER with the pinned hash is kept; one with another hash is replaced.
# Exit status: 0 every archive is there with its hash, 1 one could not be had, 2 usage.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] && [ "${1#-}" = "$1" ] || { sed -n '2,13p' "$0" | cut -c3- >&2; exit 2; }
folder=$1; shift
packages=("$@")
[ ${#packages[@]} -gt 0 ] || packages=(nlohmann_json fmt CLI11 tomlplusplus)
[ "${packages[*]}" != all ] || packages=(GTest benchmark nlohmann_json fmt CLI11 tomlplusplus)
mkdir -p "$folder" || exit 2

# The pins, read from the module itself: _reduce_pin(PACKAGE NAME VERSION FILE URL SHA256).
pins=$(tr '\n' ' ' <"$root/cmake/Dependencies.cmake" |
  grep -oE '_reduce_pin\([A-Za-z0-9_]+ [^)]+\)' | grep -v '_reduce_pin(package ' |
  sed -E 's/^_reduce_pin\(//; s/\)$//; s/ +/ /g')

# fetch_git FILE URL: the archive made from a clone in GIT_MIRRORS; nonzero where none is there.
fetch_git() {
  local file=$1 url=$2 owner name tag prefix git=""
  [ -n "${GIT_MIRRORS:-}" ] || return 1
  [[ $url =~ github\.com/([^/]+)/([^/]+)/archive/refs/tags/(.+)\.tar\.gz$ ]] || return 1
  owner=${BASH_REMATCH[1]} name=${BASH_REMATCH[2]} tag=${BASH_REMATCH[3]}
  for d in "$GIT_MIRRORS/$owner+$name/repo" "$GIT_MIRRORS/$owner+$name"; do
    git -C "$d" rev-parse --git-dir >/dev/null 2>&1 && { git=$d; break; }
  done
  [ -n "$git" ] || return 1
  prefix=$(basename "${file%.tar.gz}")
  git -C "$git" archive --format=tar --prefix="$prefix/" "$tag" 2>/dev/null |
    gzip -cn >"$file.part" && [ "${PIPESTATUS[0]}" -eq 0 ] && mv "$file.part" "$file"
}

status=0
for package in "${packages[@]}"; do
  read -r _ name version file url sha256 <<<"$(grep -E "^$package " <<<"$pins")"
  if [ -z "${sha256:-}" ]; then
    echo "dependency_archives: no pinned package $package (cmake/Dependencies.cmake pins:" \
      "$(cut -d' ' -f1 <<<"$pins" | tr '\n' ' '))" >&2
    exit 2
  fi
  path=$folder/$file how="kept"
  if [ "$(sha256sum "$path" 2>/dev/null | cut -d' ' -f1)" != "$sha256" ]; then
    rm -f "$path"
    how="downloaded"
    curl -fsSL --max-time 120 -o "$path.part" "$url" 2>/dev/null && mv "$path.part" "$path" ||
      { rm -f "$path.part"; how="made from the git clone"; fetch_git "$path" "$url"; }
  fi
  have=$(sha256sum "$path" 2>/dev/null | cut -d' ' -f1)
  if [ "$have" = "$sha256" ]; then
    echo "dependency_archives: $file ($name $version) $how, SHA256 as pinned"
  else
    rm -f "$path" "$path.part"
    where="GIT_MIRRORS is unset"
    [ -z "${GIT_MIRRORS:-}" ] || where="no clone in $GIT_MIRRORS has its tag"
    echo "dependency_archives: $file ($name $version): not had: $url could not be read," \
      "and $where" >&2
    status=1
  fi
done
exit $status
