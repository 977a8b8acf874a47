#pragma once

/*
 * journald MESSAGE_IDs, one per kind of event, so `journalctl
 * MESSAGE_ID=...` finds them and `journalctl -x` shows the explanation in
 * systemd/rdmaxferd.catalog. Stable: never reuse or change one; a new kind
 * of event gets a new id (systemd-id128 new) and a catalog entry.
 */

#define MSGID_XFER_RECEIVED     "21177541c9c64eadac5b1c2700c1e715"     /* a file was received, verified and published */
#define MSGID_XFER_SENT         "bcf37bc908594bffb6e0ba76eb55a0cd"     /* the peer verified and published a file we sent */
#define MSGID_XFER_FAILED       "637a4b76575545e392f09747026142a2"     /* a transfer failed, either direction */
#define MSGID_STARTED           "7d3ce479dad64a98965ee4be14919644"     /* ready: ring registered, listeners up */
#define MSGID_STOPPED           "33c5f0e29ef74932954ffa657944d3dc"     /* clean shutdown */
