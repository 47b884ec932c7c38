# Install and uninstall chimed and chime for one user (or system-wide with PREFIX=/usr/local), or build the
# Debian package.
#
#   make install PREFIX=~/.local      release build; binaries (chime, and chimed as a link to it: the program
#                                     is chimed when started by that name), user unit, D-Bus activation, the D-Bus
#                                     interface (share/dbus-1/interfaces/io.chime.Chime1.xml), completions,
#                                     man pages chime(1) and chimed(1), the example chime.toml and group
#                                     files in share/doc/chime/examples, and the user's pages of docs/
#                                     (docs/index.md and what it lists)
#   make uninstall PREFIX=~/.local    removes what install put there; keeps the schedule
#   make uninstall PURGE=1            also deletes the schedule ($XDG_STATE_HOME/chime)
#   make deb                          the Debian package, by debian/rules (dpkg-buildpackage -b), which stages
#                                     this install in /usr: .build-deb/chime_VERSION_ARCH.deb
#
# DESTDIR=DIR puts what install (or uninstall) handles under DIR, with the paths inside the files unchanged.
# Every release build links the Swift runtime in (-static-stdlib), so the binaries need no Swift toolchain where
# they run, binds symbols at start (-z now, as Debian's hardening does) and is linked by the toolchain's lld.
# scripts/bench builds with the same flags in the same folder, so that both use one build.

PREFIX ?= $(HOME)/.local
BINDIR ?= $(PREFIX)/bin
# chimed's notification relay, a program only chimed starts; chimed finds it as ../libexec/chime/chime-relay from
# its own folder, so the two keep their places relative to each other.
RELAYDIR = $(PREFIX)/libexec/chime
DATADIR ?= $(PREFIX)/share
DOCDIR ?= $(DATADIR)/doc/chime
UNITDIR ?= $(DATADIR)/systemd/user
DBUSDIR ?= $(DATADIR)/dbus-1/services
IFACEDIR ?= $(DATADIR)/dbus-1/interfaces
BASHDIR ?= $(DATADIR)/bash-completion/completions
ZSHDIR ?= $(DATADIR)/zsh/site-functions
FISHDIR ?= $(DATADIR)/fish/vendor_completions.d
MANDIR ?= $(DATADIR)/man/man1
STATEDIR ?= $(or $(XDG_STATE_HOME),$(HOME)/.local/state)/chime
# A build folder of its own, so that installing never competes with a debug build or test run.
BUILD ?= .build-release

SWIFT ?= swift
# lld packs the relative relocations (DT_RELR: 2.2 MB of .rela.dyn in chimed before, read at every start and
# then resident) where the system's loader reads them: glibc 2.36 and later.
RELR := $(shell getconf GNU_LIBC_VERSION 2>/dev/null | \
	awk '{ split($$2, v, "."); if (v[1] > 2 || (v[1] == 2 && v[2] >= 36)) print "-Xlinker -z -Xlinker pack-relative-relocs" }')
SWIFT_RELEASE := -Xswiftc -static-stdlib -Xlinker -z -Xlinker now -Xswiftc -use-ld=lld $(RELR)
# Where make deb leaves the package, with its .buildinfo and .changes.
DEBDIR ?= .build-deb
# The man pages, from the commands' own help (swift-argument-parser's generate-manual plugin).
MANPAGES := $(BUILD)/plugins/GenerateManual/outputs/chime/chime.1 $(BUILD)/plugins/GenerateManual/outputs/chimed/chimed.1
# The example group files, installed for the user to copy into ~/.config/chime/groups.
EXAMPLE_GROUPS := $(wildcard config/groups/*.toml)
# The user's documentation: the index and the pages it lists (docs/ holds the developers' pages too).
USER_DOCS := index.md install.md cli.md rules.md rule-phrases.md timelines.md groups.md actions.md \
	interaction.md calendars.md servers.md chimekit.md dbus-api.md security.md

.PHONY: all man install uninstall deb

# What is installed: chime (which is chimed too) and the relay. The chimed product is the same daemon alone,
# for the tests and the man page.
all:
	$(SWIFT) build -c release --scratch-path $(BUILD) $(SWIFT_RELEASE) --product chime
	$(SWIFT) build -c release --scratch-path $(BUILD) $(SWIFT_RELEASE) --product chime-relay

# The plugin builds every product in release first: with the same flags, that build is the one above.
man: all
	$(SWIFT) package --scratch-path $(BUILD) $(SWIFT_RELEASE) generate-manual

# In the generated man pages a blank line is a paragraph break: .Pp says so without groff's warning.
install: all man
	install -d $(addprefix $(DESTDIR),$(BINDIR) $(RELAYDIR) $(UNITDIR) $(DBUSDIR) $(IFACEDIR) $(DOCDIR) $(BASHDIR) $(ZSHDIR) \
		$(FISHDIR) $(MANDIR) $(DOCDIR)/examples $(DOCDIR)/examples/groups)
	for page in $(MANPAGES); do sed 's/^$$/.Pp/' $$page > $(DESTDIR)$(MANDIR)/$$(basename $$page); done
	install -m 0755 $(BUILD)/release/chime $(DESTDIR)$(BINDIR)/chime
	ln -sf chime $(DESTDIR)$(BINDIR)/chimed
	install -m 0755 $(BUILD)/release/chime-relay $(DESTDIR)$(RELAYDIR)/chime-relay
	sed -e 's|@BINDIR@|$(abspath $(BINDIR))|g' -e 's|@DOCDIR@|$(abspath $(DOCDIR))|g' \
		systemd/chimed.service.in > $(DESTDIR)$(UNITDIR)/chimed.service
	sed -e 's|@BINDIR@|$(abspath $(BINDIR))|g' systemd/io.chime.Chime1.service.in \
		> $(DESTDIR)$(DBUSDIR)/io.chime.Chime1.service
	install -m 0644 docs/io.chime.Chime1.xml $(DESTDIR)$(IFACEDIR)/io.chime.Chime1.xml
	install -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -m 0644 $(addprefix docs/,$(USER_DOCS)) $(DESTDIR)$(DOCDIR)/
	install -m 0644 config/chime.toml $(DESTDIR)$(DOCDIR)/examples/chime.toml
	install -m 0644 $(EXAMPLE_GROUPS) $(DESTDIR)$(DOCDIR)/examples/groups/
	$(BUILD)/release/chime --generate-completion-script bash > $(DESTDIR)$(BASHDIR)/chime
	$(BUILD)/release/chime --generate-completion-script zsh > $(DESTDIR)$(ZSHDIR)/_chime
	$(BUILD)/release/chime --generate-completion-script fish > $(DESTDIR)$(FISHDIR)/chime.fish
	@if [ -z "$(DESTDIR)" ]; then \
		echo "Installed. Start it with: systemctl --user daemon-reload && systemctl --user enable --now chimed"; fi

uninstall:
	-systemctl --user disable --now chimed.service 2>/dev/null
	rm -f $(addprefix $(DESTDIR),$(BINDIR)/chimed $(BINDIR)/chime $(RELAYDIR)/chime-relay $(UNITDIR)/chimed.service \
		$(DBUSDIR)/io.chime.Chime1.service $(IFACEDIR)/io.chime.Chime1.xml \
		$(DOCDIR)/README.md $(addprefix $(DOCDIR)/,$(USER_DOCS)) \
		$(DOCDIR)/examples/chime.toml $(MANDIR)/chime.1 $(MANDIR)/chimed.1 \
		$(addprefix $(DOCDIR)/examples/groups/,$(notdir $(EXAMPLE_GROUPS))) \
		$(BASHDIR)/chime $(ZSHDIR)/_chime $(FISHDIR)/chime.fish)
	-rmdir $(addprefix $(DESTDIR),$(DOCDIR)/examples/groups $(DOCDIR)/examples $(DOCDIR) $(RELAYDIR)) 2>/dev/null
	@if [ "$(PURGE)" = 1 ]; then rm -rf $(STATEDIR); echo "Removed the schedule in $(STATEDIR)"; \
	else echo "Kept the schedule in $(STATEDIR) (make uninstall PURGE=1 removes it)"; fi

# dpkg-buildpackage writes the .deb where debian/rules says (CHIME_DEBDIR) and the .buildinfo and .changes
# next to it, instead of in the parent folder.
DEB_PVA = $(shell dpkg-parsechangelog -SSource)_$(shell dpkg-parsechangelog -SVersion)_$(shell dpkg-architecture -qDEB_HOST_ARCH)
deb:
	mkdir -p $(DEBDIR)
	CHIME_DEBDIR=$(abspath $(DEBDIR)) dpkg-buildpackage -b -us -uc \
		--buildinfo-option=-u$(abspath $(DEBDIR)) --buildinfo-file=$(abspath $(DEBDIR))/$(DEB_PVA).buildinfo \
		--changes-option=-u$(abspath $(DEBDIR)) --changes-file=$(abspath $(DEBDIR))/$(DEB_PVA).changes
	@echo "Built $(DEBDIR)/$(DEB_PVA).deb"
