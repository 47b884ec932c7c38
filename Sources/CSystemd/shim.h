#ifndef CHIME_CSYSTEMD_SHIM_H
#define CHIME_CSYSTEMD_SHIM_H

#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

// sd_journal_send is variadic, which Swift cannot call; sd_journal_sendv takes an iovec array instead
// and is what SystemdKit uses. Nothing else needs a shim.
#include <sys/uio.h>

#endif
