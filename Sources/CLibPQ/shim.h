#ifndef HERALD_CLIBPQ_SHIM_H
#define HERALD_CLIBPQ_SHIM_H
// libpq has no variadic or macro-only entry points that Herald needs, so the shim only
// gathers the header. Only HeraldPostgres imports this module.
#include <libpq-fe.h>
#endif
