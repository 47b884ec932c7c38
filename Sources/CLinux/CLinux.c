// SwiftPM builds a C target only when it has a source file. Everything CLinux offers is declared in
// include/CLinux.h: the system calls come from the C library, the constants are defined there.
#include "CLinux.h"
