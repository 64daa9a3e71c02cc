/* t_vset.h - vector-set command handlers (Redis 8 VADD/VSIM/...; t_vset.c,
 * rows in t_vset.tab, COMMAND DOCS in t_vset.docs).  The value, its
 * locking rules and what persistence needs of it are types/vset.h's. */
#ifndef HK_T_VSET_H
#define HK_T_VSET_H

struct client;

void vadd_command(struct client *c);
void vrem_command(struct client *c);
void vsim_command(struct client *c);
void vcard_command(struct client *c);
void vdim_command(struct client *c);
void vemb_command(struct client *c);
void vinfo_command(struct client *c);
void vlinks_command(struct client *c);
void vsetattr_command(struct client *c);
void vgetattr_command(struct client *c);
void vrandmember_command(struct client *c);
void vismember_command(struct client *c);
void vrange_command(struct client *c);

#endif
