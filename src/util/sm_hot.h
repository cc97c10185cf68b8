/* SPDX-License-Identifier: Apache-2.0 */
/* sm_hot.h: SM_HOT marks the code every request runs (the module's hooks
 * declining, the repeat check).  GCC and clang place such functions
 * together (.text.hot), so that a request touches one or two of the
 * module's code pages instead of one in each of its files. */
#ifndef SM_HOT_H
#define SM_HOT_H

#if defined(__GNUC__)
#define SM_HOT __attribute__((hot))
#define SM_NOINLINE __attribute__((noinline))
#else
#define SM_HOT
#define SM_NOINLINE
#endif

#endif
