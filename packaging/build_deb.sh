#!/usr/bin/env bash
# Build the Debian package dist/quire_VERSION_ARCH.deb from the PyInstaller bundle dist/quire-desktop/
# (packaging/build_linux.sh makes the bundle; `make package` runs both). Debian's own tools only:
# dpkg-shlibdeps works out the libraries the bundle needs from the system, dpkg-deb under fakeroot
# packs it (files owned by root, whoever builds).
#
# Layout: the bundle under /opt/quire; /usr/bin/quire and /usr/bin/quire-desktop link into it; the
# menu entry, the icon (SVG and PNGs rendered from it), man pages and copyright under /usr/share.
# No maintainer scripts: the desktop and icon caches are refreshed by the triggers of
# desktop-file-utils and the icon theme, and nothing outside the package's own files is touched on
# install, remove or purge (the user's library, settings and models stay in the home folder).
#
# Usage: packaging/build_deb.sh   (PYTHON=... the dev interpreter, for the version and the icons;
#   MAINTAINER="Name <address>" for the package's Maintainer field)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
BUNDLE="$ROOT/dist/quire-desktop"
DEBIAN_DIR="$ROOT/packaging/debian"
# The package's Maintainer (and its changelog's signer): MAINTAINER="Name <address>", else
# DEBFULLNAME and DEBEMAIL as Debian's tools read them, else the author of the commit packaged.
if [[ -z "${MAINTAINER:-}" && -n "${DEBFULLNAME:-}" && -n "${DEBEMAIL:-}" ]]; then
    MAINTAINER="$DEBFULLNAME <$DEBEMAIL>"
fi
MAINTAINER="${MAINTAINER:-$(git -C "$ROOT" log -1 --format='%an <%ae>')}"

for tool in dpkg-deb dpkg-shlibdeps fakeroot; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "error: $tool is missing; install it with: sudo apt-get install dpkg-dev fakeroot" >&2
        exit 2
    fi
done
if [[ ! -x "$BUNDLE/quire-desktop" ]]; then
    echo "error: no bundle at $BUNDLE; run packaging/build_linux.sh (or make package) first" >&2
    exit 2
fi

VERSION="$("$PYTHON" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')"
CHANGELOG_VERSION="$(sed -n '1s/^quire (\([^)]*\)).*/\1/p' "$DEBIAN_DIR/changelog")"
if [[ "$CHANGELOG_VERSION" != "$VERSION" ]]; then
    echo "error: packaging/debian/changelog starts at $CHANGELOG_VERSION but pyproject.toml says $VERSION;" \
         "add a changelog entry for $VERSION" >&2
    exit 2
fi
# The libraries Qt's xcb platform plugin loads, which the bundle does not carry: the packages the
# app's no-display message names (desktop/platform_check.py). dpkg-shlibdeps adds the rest.
XCB_DEPENDS="$(PYTHONPATH="$ROOT" "$PYTHON" -c \
    'from desktop.platform_check import XCB_LIBRARIES; print(", ".join(XCB_LIBRARIES.values()))')"
ARCH="$(dpkg --print-architecture)"
DEB="$ROOT/dist/quire_${VERSION}_${ARCH}.deb"
STAGE="$ROOT/build/deb/quire_${VERSION}_${ARCH}"

echo "== staging $STAGE"
rm -rf "$STAGE"
mkdir -p "$STAGE/opt" "$STAGE/usr/bin" "$STAGE/DEBIAN"
cp -a "$BUNDLE" "$STAGE/opt/quire"
ln -sfn quire-desktop "$STAGE/opt/quire/quire"  # the executable runs the command line when started as `quire`
rm -rf "$STAGE/opt/quire/share"                 # the bundle's copies of the entry and icon: installed below
# The libraries were stripped when the bundle was built (packaging/slim_bundle.py), before its self-test.
ln -s /opt/quire/quire-desktop "$STAGE/usr/bin/quire-desktop"
ln -s /opt/quire/quire "$STAGE/usr/bin/quire"

share="$STAGE/usr/share"
install -Dm644 packaging/quire.desktop "$share/applications/quire.desktop"
install -Dm644 packaging/quire.svg "$share/icons/hicolor/scalable/apps/quire.svg"
QT_QPA_PLATFORM=offscreen "$PYTHON" packaging/render_icons.py "$share/icons/hicolor" >/dev/null
install -Dm644 "$DEBIAN_DIR/copyright" "$share/doc/quire/copyright"
install -Dm644 NOTICE "$share/doc/quire/NOTICE"
# The lintian tags that come with a self-contained bundle under /opt, each with its reason.
install -Dm644 "$DEBIAN_DIR/lintian-overrides" "$share/lintian/overrides/quire"
# The changelog's signature: the maintainer, and the date of the commit packaged (reproducible).
mkdir -p "$share/doc/quire"
sed -e "s|@MAINTAINER@|$MAINTAINER|" -e "s|@DATE@|$(git -C "$ROOT" log -1 --format=%aD)|" "$DEBIAN_DIR/changelog" \
    | gzip -9n > "$share/doc/quire/changelog.gz"
for page in quire quire-desktop; do
    mkdir -p "$share/man/man1"
    gzip -9n < "$DEBIAN_DIR/$page.1" > "$share/man/man1/$page.1.gz"
done

# Modes as Debian expects them whatever the builder's umask: folders 755, files 644, executables
# (and ELF files, which the loader maps) keep their x bits but lose group/other write.
find "$STAGE" -type d -exec chmod 755 {} +
find "$STAGE" -type f -exec chmod go-w {} +
find "$share" -type f -exec chmod 644 {} +
# Shared libraries are mapped, not executed: no x bits (the wheels ship some with them).
find "$STAGE/opt/quire" -type f \( -name '*.so' -o -name '*.so.*' \) -exec chmod 644 {} +

echo "== working out the system libraries the bundle needs (dpkg-shlibdeps)"
# Not the GTK 3 platform theme plugin: Qt loads it only where GTK 3 is installed (a GNOME desktop)
# and goes on without it elsewhere, so GTK is no dependency of the package.
mapfile -t elf_files < <(find "$STAGE/opt/quire" -path '*/plugins/platformthemes' -prune -o -type f \
    \( -name '*.so' -o -name '*.so.*' -o -name quire-desktop \) -exec sh -c 'head -c4 "$1" | grep -q "ELF" && echo "$1"' _ {} \;)
mapfile -t lib_dirs < <(printf '%s\n' "${elf_files[@]}" | xargs -n1 dirname | sort -u)
shlibs_work="$(mktemp -d)"
trap 'rm -rf "$shlibs_work"' EXIT
mkdir "$shlibs_work/debian"
printf 'Source: quire\n\nPackage: quire\nArchitecture: any\n' > "$shlibs_work/debian/control"
# Libraries found inside the bundle belong to no installed package: --ignore-missing-info, and
# the bundle's folders on the search path (-l) so they are not looked for on the system.
if ! shlibs="$(cd "$shlibs_work" && dpkg-shlibdeps -O --warnings=0 --ignore-missing-info \
    "${lib_dirs[@]/#/-l}" "${elf_files[@]}")"; then
    echo "error: dpkg-shlibdeps could not find every system library the bundle links to; install the build" \
         "machine's packages: grep -v '^#' packaging/debian/build-depends | xargs sudo apt-get install -y" >&2
    exit 2
fi
system_depends="$(sed -n 's/^shlibs:Depends=//p' <<<"$shlibs")"
DEPENDS="$system_depends"
IFS=',' read -ra xcb_packages <<<"$XCB_DEPENDS"
for package in "${xcb_packages[@]}"; do
    package="${package// /}"
    # Added unless dpkg-shlibdeps already names it (with the version it found).
    grep -Eq "(^|, )$package( |,|$)" <<<"$DEPENDS" || DEPENDS="${DEPENDS:+$DEPENDS, }$package"
done
echo "   Depends: $DEPENDS"

installed_size="$(du -sk --apparent-size --exclude=DEBIAN "$STAGE" | cut -f1)"
sed -e "s|@VERSION@|$VERSION|" -e "s|@ARCH@|$ARCH|" -e "s|@MAINTAINER@|$MAINTAINER|" \
    -e "s|@INSTALLED_SIZE@|$installed_size|" -e "s|@DEPENDS@|$DEPENDS|" \
    "$DEBIAN_DIR/control.in" > "$STAGE/DEBIAN/control"
(cd "$STAGE" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) \
    > "$STAGE/DEBIAN/md5sums"
chmod 644 "$STAGE/DEBIAN/control" "$STAGE/DEBIAN/md5sums"

echo "== packing $DEB"
pack_start=$SECONDS
# gzip: about 2 minutes on the shared 2-core development machine, where xz had not finished after
# ten; zstd (seconds, a slightly smaller file) is read by dpkg since 1.21.18 but Debian's lintian
# calls it a malformed archive (docs/packaging.md). DEB_COMPRESSION=xz or zstd to choose.
fakeroot dpkg-deb "-Z${DEB_COMPRESSION:-gzip}" --build "$STAGE" "$DEB" >/dev/null
echo "== packed in $((SECONDS - pack_start)) s"
echo "== bundle: $(du -sh "$BUNDLE" | cut -f1) ($(du -sb "$BUNDLE" | cut -f1) bytes, $(find "$BUNDLE" -type f | wc -l) files)"
echo "== package: $DEB $(du -h "$DEB" | cut -f1) ($(stat -c %s "$DEB") bytes), installed size $((installed_size / 1024)) MiB"
