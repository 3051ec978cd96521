/* SPDX-License-Identifier: BSD-3-Clause */
#include "droce_drop.h"

#define DROCE_X_DROP_NAME(name, cls, desc) [DROCE_DROP_##name] = #name,
static const char *const drop_names[DROCE_DROP_MAX] = { DROCE_DROP_LIST(DROCE_X_DROP_NAME) };

#define DROCE_X_DROP_DESC(name, cls, desc) [DROCE_DROP_##name] = desc,
static const char *const drop_descs[DROCE_DROP_MAX] = { DROCE_DROP_LIST(DROCE_X_DROP_DESC) };

#define DROCE_X_DROP_CLASS(name, cls, desc) [DROCE_DROP_##name] = DROCE_DROP_CLASS_##cls,
static const enum droce_drop_class drop_classes[DROCE_DROP_MAX] = { DROCE_DROP_LIST(
	DROCE_X_DROP_CLASS) };

const char *
droce_drop_name(enum droce_drop reason)
{
	return (unsigned int)reason < DROCE_DROP_MAX ? drop_names[reason] : "?";
}

const char *
droce_drop_desc(enum droce_drop reason)
{
	return (unsigned int)reason < DROCE_DROP_MAX ? drop_descs[reason] : "?";
}

enum droce_drop_class
droce_drop_class(enum droce_drop reason)
{
	return (unsigned int)reason < DROCE_DROP_MAX ? drop_classes[reason] :
						       DROCE_DROP_CLASS_MALFORMED;
}
