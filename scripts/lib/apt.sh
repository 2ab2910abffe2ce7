# shellcheck shell=bash
# ensure_apt <package>…: installs the Debian packages that are missing. Another package manager holding the dpkg
# or package-lists lock (unattended upgrades on a fresh machine, another apt-get) is waited for, up to
# SETUP_APT_LOCK_TIMEOUT seconds (default 600), and said: "apt: /var/lib/dpkg/lock-frontend is held by process 812
# (unattended-upgr): waiting for it (up to 600 s)". The caller defines log and die (they name it) and TOOLS.

APT_LOCK_TIMEOUT="${SETUP_APT_LOCK_TIMEOUT:-600}"
APT_LOCK_ERROR='Could not get lock|Unable to acquire the dpkg frontend lock|Unable to lock (directory|the administration directory)'

# apt_get <log> <apt-get args…>: one apt-get, tried again while it fails on a lock only. Returns its status;
# APT_LOCK_HELD says which lock was still held when the wait ran out (empty for any other failure).
apt_get() {
  local logf="$1" try="$1.try" deadline=$((SECONDS + APT_LOCK_TIMEOUT)) since=$SECONDS said=-1 status holder
  shift
  APT_LOCK_HELD=""
  while :; do
    # apt-get waits for the lock itself too (apt ≥ 1.9.11; older ones ignore the option), a slice at a time so
    # that we can say so; the first try does not wait, so the line comes at once.
    local slice=$((deadline - SECONDS))
    [ "$said" -lt 0 ] && slice=0
    [ "$slice" -gt 10 ] && slice=10
    status=0
    "${APT_SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o "DPkg::Lock::Timeout=$slice" "$@" >"$try" 2>&1 || status=$?
    cat "$try" >>"$logf"
    if [ "$status" -eq 0 ]; then
      [ "$said" -ge 0 ] && log "apt: the lock is free after $((SECONDS - since)) s"
      rm -f "$try"
      return 0
    fi
    if ! grep -qE "$APT_LOCK_ERROR" "$try"; then
      rm -f "$try"
      return "$status"
    fi
    holder="$(apt_lock_holder "$try")"
    if [ "$SECONDS" -ge "$deadline" ]; then
      APT_LOCK_HELD="$holder"
      rm -f "$try"
      return "$status"
    fi
    if [ "$said" -lt 0 ]; then
      log "apt: $holder: waiting for it (up to $APT_LOCK_TIMEOUT s; SETUP_APT_LOCK_TIMEOUT=SECONDS sets how long)"
      said=$SECONDS
    elif [ $((SECONDS - said)) -ge 30 ]; then
      log "apt: still waiting for the lock ($((SECONDS - since)) s of $APT_LOCK_TIMEOUT s): $holder"
      said=$SECONDS
    fi
    sleep 1
  done
}

# apt_lock_holder <output>: "/var/lib/dpkg/lock-frontend is held by process 812 (unattended-upgr)", from apt's
# "Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 812 (unattended-upgr)".
apt_lock_holder() {
  local line lock="the dpkg lock" by="another process"
  local lock_re='Could not get lock ([^ ]+[^ .])' by_re='held by (process [0-9]+( [(][^)]*[)])?)'
  line="$(grep -m1 'Could not get lock' "$1")" || true
  [[ $line =~ $lock_re ]] && lock="${BASH_REMATCH[1]}"
  [[ $line =~ $by_re ]] && by="${BASH_REMATCH[1]}"
  printf '%s is held by %s' "$lock" "$by"
}

# apt_failed <what> <log>: dies naming the held lock (the wait ran out) or the log's tail.
apt_failed() {
  if [ -n "$APT_LOCK_HELD" ]; then
    die "apt: $APT_LOCK_HELD, still after $APT_LOCK_TIMEOUT s: let it finish (or stop it), then run setup again (log: $2)"
  fi
  tail -n 30 "$2" >&2
  die "$1 failed (log: $2)"
}

ensure_apt() {
  local missing=() p
  case "$APT_LOCK_TIMEOUT" in '' | *[!0-9]*) die "SETUP_APT_LOCK_TIMEOUT must be a number of seconds (got '$APT_LOCK_TIMEOUT')" ;; esac
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null 2>&1 || die "missing Debian packages (${missing[*]}) and no apt-get to install them"
  APT_SUDO=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "missing Debian packages (${missing[*]}); run as root or install sudo"
    APT_SUDO=(sudo)
  fi
  log "apt: installing ${missing[*]}"
  local logf="$TOOLS/.apt.log" t0=$SECONDS
  : >"$logf"
  # Try without refreshing the package lists first; refresh only when that fails (empty or stale lists).
  if ! apt_get "$logf" install -y -q --no-install-recommends "${missing[@]}"; then
    [ -z "$APT_LOCK_HELD" ] || apt_failed "apt-get install" "$logf"
    apt_get "$logf" update -q || apt_failed "apt-get update" "$logf"
    apt_get "$logf" install -y -q --no-install-recommends "${missing[@]}" || apt_failed "apt-get install ${missing[*]}" "$logf"
  fi
  log "apt: done in $((SECONDS - t0))s"
}
