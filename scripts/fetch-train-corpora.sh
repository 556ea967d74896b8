#!/usr/bin/env bash
# Fetch a training corpus of real, well-documented library source code (for
# training a small code-search word-embedding model offline) into
# .bench-cache/train/<name>/, one directory per package:
#
#   py-<pkg>   Debian python3-* packages: the .py files under
#              /usr/lib/python3/dist-packages only.
#   go-<pkg>   Debian golang-*-dev packages: the .go files under
#              /usr/share/gocode/src, without *_test.go, testdata/ and vendor/.
#   npm-<pkg>  npm packages (npm pack): the .ts/.tsx/.js/.mjs files of the
#              directories listed per package below (src/ when shipped).
#
# Every tree is then cut down to source files: tests (tests/ dirs, test_*.py,
# *_test.go, *.test.*/*.spec.*), vendored code, *.min.js, files over 1 MB and
# files marked "Code generated" / "DO NOT EDIT" / "@generated" in their first 5
# lines are dropped.
#
# The retrieval benchmark's evaluation corpora (scripts/fetch-corpora.sh: the
# CPython 3.11 stdlib, Go's src/net, rxjs) must not leak into this data:
#   - packages that are or carry them (libpython3.*, python3.X stdlib dirs,
#     golang-1.*-src, golang-go, golang-golang-x-net-dev, rxjs) are refused;
#     python3-setuptools is left out because it vendors stdlib distutils;
#   - after filtering, every file is compared line by line with the evaluation
#     corpora (fetched first if missing) and dropped if it shares a run of 6+
#     non-boilerplate lines (license headers and lines common in the evaluation
#     corpora do not count) or 30%+ of its lines with them. What was dropped is
#     listed in .bench-cache/train/.overlap/<name>.txt.
#
# Versions are pinned; if a mirror no longer has a pinned version, the current
# candidate / latest is used with a warning and recorded in the stamp file.
# Idempotent: a package whose stamp file matches the pinned source is skipped.
# Needs: apt-get + dpkg-deb (Debian), npm, node, tar. Run `apt-get update` first
# if apt cannot find the packages.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TRAIN="$ROOT/.bench-cache/train"
EVAL="$ROOT/.bench-cache/corpora"

# Bump when the filtering rules change, so that every package is rebuilt.
FILTERS="filters=2"

# Debian bookworm (+ security) packages, "package version".
PY_PACKAGES=(
  "python3-django 3:3.2.25-0+deb12u7"
  "python3-sympy 1.11.1-1"
  "python3-twisted 22.4.0-4+deb12u1"
  "python3-tornado 6.2.0-3+deb12u4"
  "python3-requests 2.28.1+dfsg-1"
  "python3-urllib3 1.26.12-1+deb12u4"
  "python3-jinja2 3.1.2-1+deb12u3"
  "python3-sqlalchemy 1.4.46+ds1-1"
  "python3-docutils 0.19+dfsg-6"
  "python3-sphinx 5.3.0-4"
  "python3-pygments 2.14.0+dfsg-1"
  "python3-babel 2.10.3-1"
  "python3-paramiko 2.12.0-2"
  "python3-cryptography 38.0.4-3+deb12u1"
  "python3-dateutil 2.8.2-2"
  "python3-yaml 6.0-3+b2"
  "python3-attr 22.2.0-1"
  "python3-click 8.1.3-2"
  "python3-werkzeug 2.2.2-3+deb12u1"
  "python3-flask 2.2.2-3"
  "python3-networkx 2.8.8-1"
  "python3-numpy 1:1.24.2-1+deb12u1"
  "python3-pandas 1.5.3+dfsg-2"
  "python3-matplotlib 3.6.3-1+b1"
  "python3-aiohttp 3.8.4-1+deb12u2"
  "python3-pydantic 1.10.4-1+deb12u1"
  "python3-scipy 1.10.1-2"
  "python3-sklearn 1.2.1+dfsg-1"
  "python3-nltk 3.8-1"
  "python3-bs4 4.11.2-2"
  "python3-lxml 4.9.2-1+deb12u1"
  "python3-psycopg2 2.9.5-1+b1"
  "python3-redis 4.3.4-3"
  "python3-celery 5.2.6-5"
  "python3-kombu 5.2.4-1"
  "python3-mako 1.2.4+ds-1"
  "python3-markdown 3.4.1-2+deb12u1"
  "python3-jsonschema 4.10.3-1"
  "python3-hypothesis 6.67.1-1"
  "python3-pytest 7.2.1-2"
  "python3-pluggy 1.0.0+repack-1"
  "python3-httplib2 0.20.4-3+deb12u1"
  "python3-oauthlib 3.2.2-1"
  "python3-jwt 2.6.0-1+deb12u1"
  "python3-ldap3 2.9.1-2"
  "python3-pexpect 4.8.0-4"
  "python3-psutil 5.9.4-1+b1"
  "python3-zmq 24.0.1-4+b1"
  "python3-gevent 22.10.2-3"
  "python3-eventlet 0.33.1-4"
  "python3-sqlparse 0.4.2-1+deb12u1"
  "python3-arrow 1.2.3-1"
  "python3-pendulum 2.1.2-4"
  "python3-tz 2022.7.1-4"
  "python3-rich 13.3.1-1"
  "python3-prompt-toolkit 3.0.36-2"
  "python3-ruamel.yaml 0.17.21-1"
  "python3-packaging 23.0-1"
  "python3-pip 23.0.1+dfsg-1"
  "python3-virtualenv 20.17.1+ds-1"
  "python3-fabric 2.6.0-1"
  "python3-invoke 2.0.0-1"
  "ansible-core 2.14.18-0+deb12u2"
  "python3-scrapy 2.8.0-2"
  "python3-dnspython 2.3.0-1+deb12u1"
  "python3-cherrypy3 18.8.0-2"
  "python3-bottle 0.12.23-1.1"
  "python3-falcon 3.1.1-1+b1"
  "python3-marshmallow 3.18.0-1"
  "python3-alembic 1.8.1-2"
  "python3-peewee 3.14.10+dfsg-1+b3"
  "python3-gunicorn 20.1.0-6+deb12u1"
  "python3-uvicorn 0.17.6-1"
  "python3-starlette 0.26.1-1+deb12u2"
  "python3-websockets 10.4-1"
  "python3-h11 0.14.0-1.1~deb12u1"
  "python3-h2 4.1.0-4"
  "python3-hpack 4.0.0-2"
  "python3-hyperframe 6.0.0-1"
  "python3-trio 0.22.0-0.2"
  "python3-anyio 3.6.2-1"
  "python3-astropy 5.2.1-2+deb12u1"
  "python3-statsmodels 0.13.5+dfsg-7"
  "python3-dask 2022.12.1+dfsg-2"
  "python3-xarray 2023.01.0-1.1"
  "python3-biopython 1.80+dfsg-4+b1"
  "python3-skimage 0.19.3-8"
  "python3-mpmath 1.2.1-2"
  "python3-ipython 8.5.0-4"
  "python3-traitlets 5.5.0-1"
  "python3-more-itertools 8.10.0-2"
  "python3-toolz 0.12.0-1"
  "python3-boltons 21.0.0-2"
  "python3-pyparsing 3.0.9-1"
  "python3-httpx 0.23.3-1"
  "python3-rdflib 6.1.1-1"
  "python3-dulwich 0.21.2-1+b1"
  "python3-git 3.1.30-1+deb12u3"
  "python3-openpyxl 3.0.9-1"
  "python3-sqlglot 10.6.3-1"
  "python3-lark 1.1.5-1"
  "python3-libcloud 3.4.1-5"
  "python3-openstacksdk 0.101.0-2"
  "python3-pymongo 3.11.0-1+deb12u1"
  "python3-netaddr 0.8.0-2"
)

GO_PACKAGES=(
  "golang-github-gorilla-mux-dev 1.8.0-1"
  "golang-github-gorilla-websocket-dev 1.5.0-2"
  "golang-github-spf13-cobra-dev 1.6.1-1"
  "golang-github-spf13-pflag-dev 1.0.6~git20210604-d5e0c0615ace-1"
  "golang-github-spf13-viper-dev 1.10.1-1"
  "golang-github-prometheus-client-golang-dev 1.14.0-3"
  "golang-github-prometheus-common-dev 0.39.0-2"
  "golang-github-hashicorp-raft-dev 1.1.2-1"
  "golang-github-hashicorp-hcl-v2-dev 2.14.1-2"
  "golang-github-hashicorp-memberlist-dev 0.2.2-2"
  "golang-github-hashicorp-serf-dev 0.9.4~ds1-1"
  "golang-github-hashicorp-golang-lru-dev 0.5.4-2"
  "golang-github-hashicorp-yamux-dev 0.0+git20190923.df201c7-1"
  "golang-github-hashicorp-go-multierror-dev 1.1.1-2"
  "golang-github-miekg-dns-dev 1.1.50-2"
  "golang-golang-x-crypto-dev 1:0.4.0-1"
  "golang-golang-x-text-dev 0.7.0-1"
  "golang-golang-x-sys-dev 0.3.0-1"
  "golang-golang-x-tools-dev 1:0.5.0+ds-1"
  "golang-golang-x-oauth2-dev 0.3.0-1"
  "golang-golang-x-sync-dev 0.1.0-1"
  "golang-golang-x-mod-dev 0.7.0-1"
  "golang-github-sirupsen-logrus-dev 1.9.0-1"
  "golang-github-stretchr-testify-dev 1.8.1-1"
  "golang-google-grpc-dev 1.33.3-2"
  "golang-google-protobuf-dev 1.28.1-3"
  "golang-github-go-sql-driver-mysql-dev 1.5.0-2"
  "golang-github-lib-pq-dev 1.10.7-2"
  "golang-github-jackc-pgx-v4-dev 4.15.0-4"
  "golang-github-klauspost-compress-dev 1.15.12+ds1-3"
  "golang-github-pkg-errors-dev 0.9.1-2"
  "golang-github-julienschmidt-httprouter-dev 1.3.0-2"
  "golang-github-valyala-fasthttp-dev 1:1.31.0-4"
  "golang-github-gin-gonic-gin-dev 1.8.1-1"
  "golang-github-labstack-echo-dev 4.2.1-3"
  "golang-github-go-chi-chi-dev 5.0.7-1"
  "golang-github-fsnotify-fsnotify-dev 1.6.0-2"
  "golang-github-mattn-go-sqlite3-dev 1.14.16~ds1-1"
  "golang-github-boltdb-bolt-dev 1.3.1-7"
  "golang-github-syndtr-goleveldb-dev 0.0~git20200815.5c35d60-1"
  "golang-go.uber-zap-dev 1.23.0-1"
  "golang-github-google-go-cmp-dev 0.5.9-1"
  "golang-github-burntsushi-toml-dev 1.2.0-2"
  "golang-gopkg-yaml.v3-dev 3.0.1-3"
  "golang-github-urfave-cli-v2-dev 2.3.0-2"
  "golang-github-yuin-goldmark-dev 1.5.4-1"
  "golang-github-minio-minio-go-v7-dev 7.0.46-1"
  "golang-etcd-server-dev 3.4.23-4"
  "golang-github-nats-io-nats-server-dev 2.9.10-1"
  "golang-github-nats-io-go-nats-dev 1.22.1-1"
  "golang-github-nats-io-jwt-dev 2.3.0-1"
  "golang-github-gorilla-handlers-dev 1.5.1-3"
  "golang-github-gorilla-sessions-dev 1.2.1-1"
  "golang-github-gorilla-schema-dev 1.2.0-2"
  "golang-github-gorilla-securecookie-dev 1.1.1-2"
  "golang-github-gorilla-csrf-dev 1.7.1-1"
  "golang-github-hashicorp-go-hclog-dev 0.11.0-1"
  "golang-github-hashicorp-go-plugin-dev 1.0.1-4"
  "golang-github-hashicorp-go-retryablehttp-dev 0.7.1-1"
  "golang-github-hashicorp-go-version-dev 1.3.0-1"
  "golang-github-hashicorp-go-memdb-dev 1.2.1-1"
  "golang-github-hashicorp-go-immutable-radix-dev 1.3.1-3"
  "golang-github-hashicorp-hcl-dev 1.0.0-1.1"
  "golang-github-hashicorp-go-getter-dev 1.4.1-1"
  "golang-github-hashicorp-go-sockaddr-dev 1.0.2-2"
  "golang-github-armon-go-metrics-dev 0.3.4-1"
  "golang-github-armon-go-radix-dev 1.0.0-2"
  "golang-github-coreos-go-systemd-dev 22.3.2-1"
  "golang-github-coreos-go-oidc-dev 2.1.0-2"
  "golang-github-docker-docker-dev 20.10.24+dfsg1-1+deb12u1"
  "golang-github-opencontainers-runc-dev 1.1.5+ds1-1+deb12u1"
  "golang-github-opencontainers-selinux-dev 1.10.0+ds1-1"
  "golang-github-opencontainers-image-spec-dev 1.1.0~rc2-3"
  "golang-github-containerd-containerd-dev 1.6.20~ds1-1+deb12u3"
  "golang-github-google-uuid-dev 1.3.0-1"
  "golang-github-google-btree-dev 1.0.0-1"
  "golang-github-golang-groupcache-dev 0.0~git20200121.8c9f03a-2"
  "golang-github-golang-protobuf-1-5-dev 1.5.2-3"
  "golang-github-json-iterator-go-dev 1.1.12-1"
  "golang-github-mitchellh-mapstructure-dev 1.5.0-2"
  "golang-github-mitchellh-cli-dev 1.1.1-1"
  "golang-github-olekukonko-tablewriter-dev 0.0.5-2"
  "golang-github-pelletier-go-toml-dev 1.9.4-1"
  "golang-github-pelletier-go-toml.v2-dev 2.0.6-1"
  "golang-github-rs-zerolog-dev 1.26.1-2"
  "golang-github-robfig-cron-dev 3.0.1-1"
  "golang-github-shirou-gopsutil-dev 3.22.10-1"
  "golang-github-vishvananda-netlink-dev 1.1.0.125.gf243826-4"
  "golang-github-cenkalti-backoff-dev 4.1.3-1"
  "golang-github-gofrs-uuid-dev 4.3.1-1"
  "golang-github-jmoiron-sqlx-dev 1.3.5-1"
  "golang-github-masterminds-semver-dev 3.2.0-1"
  "golang-github-masterminds-sprig-dev 3.2.3-5"
  "golang-github-nsf-termbox-go-dev 0.0~git20160914-3"
  "golang-github-emicklei-go-restful-dev 3.10.2-1"
  "golang-github-grpc-ecosystem-go-grpc-middleware-dev 1.3.0-1"
  "golang-github-grpc-ecosystem-grpc-gateway-dev 1.6.4-2"
  "golang-k8s-klog-dev 2.80.1-2"
  "golang-k8s-utils-dev 0.0~git20221128.99ec85e-1"
  "golang-github-prometheus-procfs-dev 0.8.0-3"
  "golang-github-cespare-xxhash-dev 2.1.1-2"
  "golang-github-dgraph-io-badger-dev 2.2007.2-3"
  "golang-github-dgraph-io-ristretto-dev 0.0.3-2"
  "golang-github-lucas-clemente-quic-go-dev 0.29.0-1"
  "golang-github-pion-webrtc.v3-dev 3.1.56-2"
  "golang-github-pion-ice.v2-dev 2.3.1-1"
  "golang-github-pion-dtls.v2-dev 2.2.6-1"
  "golang-github-pion-sctp-dev 1.8.6-1"
  "golang-github-pion-turn.v2-dev 2.1.0-1"
  "golang-github-pion-rtp-dev 1.7.13-1"
  "golang-github-pion-stun-dev 0.4.0-1"
  "golang-github-caddyserver-certmagic-dev 0.17.2-2"
  "golang-github-mholt-acmez-dev 0.1.3-2"
  "golang-github-go-git-go-git-dev 5.4.2-3"
  "golang-github-gdamore-tcell.v2-dev 2.5.4-1"
  "golang-github-rivo-tview-dev 0.0~git20221029.c4a7e50-1"
  "golang-github-go-kit-kit-dev 0.10.0-1"
  "golang-github-go-playground-validator-v10-dev 10.4.1-4"
  "golang-github-getkin-kin-openapi-dev 0.110.0-1"
  "golang-github-gocql-gocql-dev 1.3.2-1"
  "golang-github-go-ldap-ldap-dev 3.4.4-2"
  "golang-gopkg-square-go-jose.v2-dev 2.6.0-2"
  "golang-github-golang-jwt-jwt-dev 4.4.3-1"
  "golang-github-antonmedv-expr-dev 1.8.9-2"
  "golang-github-yuin-gopher-lua-dev 0.0~git20170915.0.eb1c729-5"
  "golang-github-emirpasic-gods-dev 1.12.0-2"
  "golang-github-spf13-afero-dev 1.9.3-1"
  "golang-github-spf13-cast-dev 1.5.0-2"
  "golang-mvdan-sh-dev 3.6.0-1"
  "golang-github-pkg-sftp-dev 1.13.5-2"
  "golang-github-emersion-go-imap-dev 1.2.0-2"
  "golang-github-zclconf-go-cty-dev 1.12.1-1"
  "golang-github-syncthing-syncthing-dev 1.19.2~ds1-1"
  "golang-github-rclone-rclone-dev 1.60.1+dfsg-2"
  "golang-opentelemetry-otel-dev 1.1.0-2"
  "golang-github-evanw-esbuild-dev 0.17.0-1"
  "golang-github-cilium-ebpf-dev 0.9.1-1"
  "golang-github-google-gopacket-dev 1.1.19-3"
  "golang-mongodb-mongo-driver-dev 1.8.4+ds1-3"
  "golang-github-prometheus-alertmanager-dev 0.25.0-1"
  "golang-github-google-go-github-dev 48.1.0-2"
  "golang-github-gomodule-redigo-dev 1:1.8.3-1"
  "golang-golang-x-exp-dev 0.0~git20221028.83b7d23-2"
  "golang-golang-x-time-dev 0.3.0-1"
  "golang-golang-x-term-dev 0.3.0-1"
)

# npm packages, "name|version|what to take|what to drop afterwards". Both lists
# are space-separated paths or globs relative to the package root; a directory
# is taken whole (then filtered like everything else).
NPM_PACKAGES=(
  "typescript|5.9.3|lib/*.d.ts|"
  "@types/node|26.6.6|*|ts5.*"
  "lodash|4.18.1|*.js|lodash.js core.js fp.js"
  "date-fns|4.4.0|*.js _lib parse|"
  "ramda|0.32.0|src|"
  "immutable|5.2.1|dist/immutable.d.ts dist/immutable.es.js|"
  "zod|4.6.7|src|src/v3/benchmarks"
  "fp-ts|2.16.11|es6|"
  "io-ts|2.2.22|es6|"
  "yjs|13.6.33|src|"
  "d3-array|3.2.4|src|"
  "d3-scale|4.0.2|src|"
  "d3-shape|3.2.0|src|"
  "axios|1.21.1|lib index.d.ts|"
  "express|5.3.0|index.js lib|"
  "koa|3.3.0|lib|"
  "ws|8.23.0|lib|"
  "chokidar|5.0.0|*.js *.d.ts|"
  "commander|14.0.3|lib typings|"
  "yargs|18.2.0|build/lib lib|"
  "undici|7.30.2|lib types|lib/llhttp/llhttp-wasm.js lib/llhttp/llhttp_simd-wasm.js"
  "vscode-languageserver-protocol|3.18.5|lib|"
  "vscode-jsonrpc|10.0.0|lib|"
  "effect|4.1.0|src|"
  "mobx|7.1.3|src|"
  "redux|5.0.1|src|"
  "ajv|8.20.0|lib|"
  "three|0.187.0|src examples/jsm|examples/jsm/libs"
  "ol|10.11.0|*|dist"
  "webpack|5.112.2|lib|"
  "typeorm|1.1.1|*|browser"
  "eslint|10.15.0|lib|"
  "ethers|6.17.0|src.ts|"
  "mongodb|7.9.0|src|"
  "puppeteer-core|24.43.1|src|src/generated"
  "mathjs|15.2.0|lib/esm|"
  "jsdom|29.1.1|lib|lib/generated"
  "echarts|6.1.0|lib|"
  "pdf-lib|1.17.1|src|"
  "knex|3.3.0|knex.js lib|"
  "@tanstack/query-core|5.108.0|src|"
  "luxon|3.7.2|src|"
  "kafkajs|2.2.4|src|"
  "node-forge|1.4.3|lib|"
  "simple-statistics|7.12.1|src|"
  "graphql|16.15.0|*.mjs */*.mjs */*/*.mjs */*/*/*.mjs|"
  "leaflet|1.9.4|src|"
  "cheerio|1.2.0|src|"
  "ioredis|6.0.0|built|"
  "winston|3.19.0|lib|"
  "preact|11.2.0|src hooks/src compat/src debug/src devtools/src jsx-runtime/src|"
  "lit-html|3.3.3|development|"
  "highlight.js|11.12.0|lib/core.js lib/languages|"
  "decimal.js|10.6.0|decimal.mjs|"
  "jszip|3.10.2|lib|"
  "mongoose|9.12.1|index.js lib|"
  "fastify|5.12.8|fastify.js lib|"
  "semver|7.8.6|index.js classes functions ranges internal|"
  "nunjucks|3.2.4|src|"
  "moment|2.31.0|src/lib src/moment.js|"
  "immer|11.2.10|src|"
  "markdown-it|14.1.0|lib|"
)

STAMP=".corpus-source"
START=$SECONDS
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
chmod 755 "$TMP"   # lets apt's unprivileged downloader write here

log() { echo "fetch-train-corpora: $*" >&2; }

# The evaluation corpora themselves, and packages that carry them.
forbidden() {
  case "$1" in
    libpython3*|python3.[0-9]*|python3-setuptools|python3-distutils|python3-lib2to3) return 0 ;;
    golang-go|golang-src|golang-[0-9]*|golang-golang-x-net-dev) return 0 ;;
    rxjs|npm:rxjs) return 0 ;;
  esac
  return 1
}


# npm_fetch NAME VERSION DIR: npm pack NAME@VERSION (falling back to the latest
# version, with a warning) and unpack it as DIR/package. Prints the version.
npm_fetch() {
  local pkg="$1" version="$2" dir="$3" tgz
  mkdir -p "$dir"
  if ! tgz="$(cd "$dir" && npm pack --silent "$pkg@$version" 2>/dev/null | tail -n1)"; then
    log "WARNING: $pkg@$version not available, using the latest version"
    tgz="$(cd "$dir" && npm pack --silent "$pkg" 2>/dev/null | tail -n1)"
  fi
  mkdir -p "$dir/package"   # the top directory is not always package/ (@types)
  tar -C "$dir/package" --strip-components=1 -xzf "$dir/$tgz"
  node -p 'require(process.argv[1]).version' "$dir/package/package.json"
}

DEST="$TRAIN"
# shellcheck source=fetch-lib.sh
source "$(dirname "$0")/fetch-lib.sh"

# prune_tree DIR LANG: keep only LANG (py|go|js) source files in DIR.
prune_tree() {
  local dir="$1" lang="$2"
  find "$dir" ! -type f ! -type d -delete          # symlinks, devices, ...
  case "$lang" in
    py)
      find "$dir" -type d \( -name __pycache__ -o -name tests -o -name _vendor -o -name vendor \
        -o -name node_modules \) -prune -exec rm -rf {} +
      find "$dir" -type f \( ! -name '*.py' -o -name 'test_*.py' -o -name '*_test.py' \
        -o -name conftest.py \) -delete ;;
    go)
      find "$dir" -type d \( -name testdata -o -name vendor -o -name node_modules \) -prune -exec rm -rf {} +
      find "$dir" -type f \( ! -name '*.go' -o -name '*_test.go' \) -delete ;;
    js)
      find "$dir" -type d \( -name test -o -name tests -o -name __tests__ -o -name __mocks__ \
        -o -name node_modules -o -name vendor -o -name rxjs \) -prune -exec rm -rf {} +
      find "$dir" -type f \( ! \( -name '*.ts' -o -name '*.tsx' -o -name '*.js' -o -name '*.mjs' \) \
        -o -name '*.min.js' -o -name '*.min.mjs' -o -name '*.test.*' -o -name '*.spec.*' \) -delete ;;
  esac
  find "$dir" -type f -size +1048576c -delete       # over 1 MB
  find "$dir" -type f -print0 \
    | xargs -0 -r awk 'FNR > 5 { nextfile } /Code generated|DO NOT EDIT|@generated/ { print FILENAME; nextfile }' \
    | while IFS= read -r f; do rm -f -- "$f"; done
  find "$dir" -mindepth 1 -type d -empty -delete
}

# decontaminate NAME DIR: drop files of DIR that share code with the
# evaluation corpora; the dropped ones are listed in $TRAIN/.overlap/NAME.txt.
decontaminate() {
  mkdir -p "$TRAIN/.overlap"
  node "$TMP/overlap.mjs" "$EVAL" "$2" "$TRAIN/.overlap" > "$TRAIN/.overlap/$1.txt"
  local n
  n="$(grep -c . "$TRAIN/.overlap/$1.txt" || true)"
  [[ "$n" == 0 ]] || log "$1: dropped $n file(s) overlapping the evaluation corpora"
}

write_overlap_checker() {
  cat > "$TMP/overlap.mjs" <<'EOF'
// node overlap.mjs EVAL_DIR DIR CACHE_DIR: delete every file of DIR that shares code with
// the .py/.go/.ts files of EVAL_DIR; print "path<TAB>reason" for each.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';

const [evalDir, dir, cacheDir] = process.argv.slice(2);
const MIN_LEN = 20;        // shorter lines are too generic to tell anything
const BOILERPLATE = 5;     // lines found in this many eval files are ignored
const MAX_RUN = 6;         // this many consecutive shared lines: a copy
const MAX_SHARE = 0.3;     // or this share of the file's lines (and >= 3)
// License headers (Apache, BSD, ...) are shared by unrelated code: ignored.
const LICENSE = /^(#|\/\/|\/?\*).*(licen[cs]e|copyright|warrant|applicable law|rights reserved)/i;

function* walk(d) {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) yield* walk(p);
    else if (e.isFile()) yield p;
  }
}
const lines = (text) =>
  text.split('\n').map((l) => l.trim().replace(/\s+/g, ' ')).filter((l) => l.length >= MIN_LEN);

// The evaluation corpora's lines are indexed once and kept (v8-serialised) beside the overlap
// lists, keyed by every evaluation file's path, size and mtime: reading the 34,000 files again for
// each of 300 packages took most of the fetch's time.
const evalFiles = [...walk(evalDir)].filter((f) => /\.(py|go|ts)$/.test(f)).sort();
const key = createHash('sha1').update(evalFiles.map((f) => { const s = fs.statSync(f); return `${f}\t${s.size}\t${s.mtimeMs}`; }).join('\n')).digest('hex');
const cacheFile = path.join(cacheDir, 'eval-lines.v8');
let cached = null;
try { cached = v8.deserialize(fs.readFileSync(cacheFile)); } catch { cached = null; }
let seen, wholeFiles;   // line -> number of eval files containing it; whole files' lines
if (cached && cached.key === key) ({ seen, wholeFiles } = cached);
else {
  seen = new Map();
  wholeFiles = new Set();
  for (const f of evalFiles) {
    const ls = lines(fs.readFileSync(f, 'utf8'));
    wholeFiles.add(ls.join('\n'));
    for (const l of new Set(ls)) seen.set(l, (seen.get(l) ?? 0) + 1);
  }
  fs.writeFileSync(cacheFile, v8.serialize({ key, seen, wholeFiles }));
}
if (seen.size < 100000) throw new Error(`evaluation corpora under ${evalDir} look incomplete`);

for (const f of walk(dir)) {
  const all = lines(fs.readFileSync(f, 'utf8'));
  const ls = all.filter((l) => (seen.get(l) ?? 0) < BOILERPLATE && !LICENSE.test(l));
  let shared = 0, run = 0, maxRun = 0;
  for (const l of ls) {
    if (seen.has(l)) { shared++; run++; maxRun = Math.max(maxRun, run); } else run = 0;
  }
  let why = null;
  if (all.length > 0 && wholeFiles.has(all.join('\n'))) why = 'identical';
  else if (maxRun >= MAX_RUN) why = `run of ${maxRun} shared lines`;
  else if (shared >= 3 && shared / ls.length >= MAX_SHARE) why = `${shared}/${ls.length} lines shared`;
  if (why) {
    fs.rmSync(f);
    console.log(`${path.relative(dir, f)}\t${why}`);
  }
}
EOF
}

fetch_deb() {   # LANG PACKAGE VERSION
  local lang="$1" pkg="$2" version="$3" name src_dir got
  case "$lang" in
    py) name="py-${pkg#python3-}";                  src_dir="usr/lib/python3/dist-packages" ;;
    go) name="go-${pkg#golang-}"; name="${name%-dev}"; src_dir="usr/share/gocode/src" ;;
  esac
  if forbidden "$pkg"; then log "REFUSED: $pkg is (or carries) an evaluation corpus"; return; fi
  local source="debian:$pkg=$version:$FILTERS"
  if up_to_date "$name" "$source"; then log "$name: up to date"; return; fi
  log "$name: fetching Debian $pkg $version"
  local out="$TMP/$name"
  got="$(apt_fetch "$pkg" "$version" "$TMP/deb-$name")"
  mkdir -p "$out"
  if [[ -d "$TMP/deb-$name/root/$src_dir" ]]; then
    cp -a "$TMP/deb-$name/root/$src_dir/." "$out/"
  fi
  rm -rf "$TMP/deb-$name"
  prune_tree "$out" "$lang"
  decontaminate "$name" "$out"
  if [[ -z "$(find "$out" -type f -print -quit)" ]]; then
    log "WARNING: $name: no source files left, skipped"; rm -rf "$out"; return
  fi
  [[ "$got" == "$version" ]] || source="debian:$pkg=$got:$FILTERS"
  install_corpus "$name" "$source" "$out"
}

fetch_npm() {   # "name|version|include|exclude"
  local pkg version include exclude name got
  IFS='|' read -r pkg version include exclude <<< "$1"
  name="npm-${pkg#@}"; name="${name//\//-}"
  if forbidden "$pkg" || forbidden "npm:$pkg"; then log "REFUSED: $pkg is an evaluation corpus"; return; fi
  local source="npm:$pkg@$version:$include:$FILTERS"
  if up_to_date "$name" "$source"; then log "$name: up to date"; return; fi
  log "$name: fetching $pkg@$version from npm"
  local work="$TMP/npm-$name" out="$TMP/$name" pat p
  got="$(npm_fetch "$pkg" "$version" "$work")"
  mkdir -p "$out"
  (
    cd "$work/package"
    shopt -s nullglob
    for pat in $include; do
      for p in $pat; do cp -a --parents "$p" "$out/"; done
    done
  )
  (
    cd "$out"
    for pat in $exclude; do rm -rf -- $pat; done
  )
  rm -rf "$work"
  prune_tree "$out" js
  decontaminate "$name" "$out"
  if [[ -z "$(find "$out" -type f -print -quit)" ]]; then
    log "WARNING: $name: no source files left, skipped"; rm -rf "$out"; return
  fi
  [[ "$got" == "$version" ]] || source="npm:$pkg@$got:$include:$FILTERS"
  install_corpus "$name" "$source" "$out"
}

# Remove package trees that are no longer in the lists above.
prune_stale() {
  local -A keep=()
  local d s pkg
  for s in "${PY_PACKAGES[@]}"; do pkg="${s%% *}"; keep["py-${pkg#python3-}"]=1; done
  for s in "${GO_PACKAGES[@]}"; do pkg="${s%% *}"; pkg="go-${pkg#golang-}"; keep["${pkg%-dev}"]=1; done
  for s in "${NPM_PACKAGES[@]}"; do pkg="npm-${s%%|*}"; pkg="${pkg/npm-@/npm-}"; keep["${pkg//\//-}"]=1; done
  for d in "$TRAIN"/*/; do
    d="$(basename "$d")"
    [[ -f "$TRAIN/$d/$STAMP" && -z "${keep[$d]:-}" ]] || continue
    log "$d: no longer listed, removing"
    rm -rf "${TRAIN:?}/$d" "$TRAIN/.overlap/$d.txt"
  done
}

summary() {
  local lang ext files bytes pkgs total_files=0 total_bytes=0
  printf '%-8s %5s %8s %12s\n' lang pkgs files bytes
  for lang in py go npm; do
    case "$lang" in py) ext='\.py$' ;; go) ext='\.go$' ;; npm) ext='\.(ts|tsx|js|mjs)$' ;; esac
    pkgs="$(find "$TRAIN" -mindepth 1 -maxdepth 1 -type d -name "$lang-*" | wc -l)"
    files="$(find "$TRAIN" -path "$TRAIN/$lang-*" -type f ! -name "$STAMP" | grep -cE "$ext" || true)"
    bytes="$(find "$TRAIN" -path "$TRAIN/$lang-*" -type f ! -name "$STAMP" -printf '%s\n' | awk '{s+=$1} END {print s+0}')"
    printf '%-8s %5d %8d %12d\n' "$lang" "$pkgs" "$files" "$bytes"
    total_files=$((total_files + files)); total_bytes=$((total_bytes + bytes))
  done
  printf '%-8s %5s %8d %12d\n' total "" "$total_files" "$total_bytes"
  echo "sources:"
  cat "$TRAIN"/*/"$STAMP" | sed 's/^/  /'
}

# The evaluation corpora are needed to check for overlap with them.
"$ROOT/scripts/fetch-corpora.sh" >&2
write_overlap_checker
mkdir -p "$TRAIN"

for spec in "${PY_PACKAGES[@]}"; do fetch_deb py $spec; done
for spec in "${GO_PACKAGES[@]}"; do fetch_deb go $spec; done
for spec in "${NPM_PACKAGES[@]}"; do fetch_npm "$spec"; done
prune_stale

summary
log "done in $((SECONDS - START))s"
