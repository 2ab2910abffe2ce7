# shellcheck shell=bash
# progress_wait <since> <prefix> <verb> <name>=<pid>…: returns once every pid has ended, saying at least every
# 10 s what still runs — "<prefix> 40 s: still <verb>: agents, code-server" (the names only when there are
# several), timed from <since> ($SECONDS then). A quiet minute looks like a hang. `wait` for their statuses.
progress_wait() {
  local since="$1" prefix="$2" verb="$3" pair running
  shift 3
  while :; do
    for _ in $(seq 1 20); do
      running=()
      for pair in "$@"; do kill -0 "${pair#*=}" 2>/dev/null && running+=("${pair%%=*}"); done
      [ ${#running[@]} -eq 0 ] && return 0
      sleep 0.5
    done
    if [ $# -gt 1 ]; then
      printf '%s %s s: still %s: %s\n' "$prefix" "$((SECONDS - since))" "$verb" "$(IFS=,; echo "${running[*]}" | sed 's/,/, /g')"
    else
      printf '%s %s s: still %s\n' "$prefix" "$((SECONDS - since))" "$verb"
    fi
  done
}
