#ifndef CHIME_CCANBERRA_SHIM_H
#define CHIME_CCANBERRA_SHIM_H

#include <canberra.h>

// ca_context_play and ca_context_change_props are variadic (key, value, ..., NULL), which Swift cannot
// call; ChimeDaemon's SoundPlayer builds a ca_proplist and calls ca_context_play_full and
// ca_context_change_props_full instead. The CA_PROP_* keys are string literals, which Swift imports as
// they are, and the CA_ERROR_* codes an enum. Nothing else needs a shim.

#endif
