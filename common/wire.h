#pragma once

/*
 * The peer-to-peer protocol spoken between two rdmaxferd over an RC queue
 * pair. Pure encode/decode; nothing here touches verbs.
 *
 * Connection set-up (rdma_cm private data):
 *   sender  -> receiver  REQ  struct wire_hello    (magic, version, whether the
 *                                                   sender holds a key; for a
 *                                                   lane: its number, token, tag)
 *   receiver-> sender    REP  struct wire_welcome  (credits, slot size, nonce Nr)
 *   receiver-> sender    REJ  struct wire_reject   (status, supported version)
 *
 * Then, over the QP:
 *   S->R  OFFER   name, size, chunk size, lanes wanted, lane token, source
 *                 identity token, the sender's nonce Ns, the file's index
 *                 in the session and the job's totals (files, bytes), MAC
 *                 (with a key)
 *   R->S  ACCEPT  lanes granted, flags, the file's index, where each lane
 *                 resumes (chunks of its run kept from an interrupted
 *                 attempt), MAC; or REFUSE (status + text)
 *   S->R  data    IBV_WR_SEND_WITH_IMM, imm = htobe32(chunk sequence number),
 *                 payload = raw file bytes at offset seq * chunk_size
 *   R->S  CREDIT  more receive slots are posted for you
 *   S->R  END     the file's index, the lane's bytes + the lane's digest,
 *                 MAC: XXH3-128 over the XXH3-128s of the lane's
 *                 WIRE_BLOCK_SIZE blocks of that file (digest.h)
 *   R->S  RESULT  the file's index, status of verify + publish, receiver's
 *                 byte count and time, MAC
 *   S->R  WAIT    between two files: the next file's index; its offer is
 *                 coming (version 6, Sync, below; or its sender's owner
 *                 holds it up: a relay's tree entry not yet staged there)
 *
 * Up to two files of a session may be in flight (version 8, Pipelining,
 * below): a lane's data and END after its END of file i are file i + 1's.
 *
 * Sessions (version 4): one job of several files is one session over the
 * same connections. The first OFFER (file 0) announces the job's totals,
 * job_files >= 1 and job_bytes, which the receiver checks against its
 * limits before any data moves; a single-file send is a session of one.
 * After file i's RESULT "ok" (on lane 0 only, unless it is the last), the
 * sender makes the OFFER of file i + 1 on lane 0, on the lanes already
 * connected: its lanes field must be the session's (the first ACCEPT's),
 * its chunk size the first offer's, its token and nonce zero; the ACCEPT
 * grants the same lanes. Its source is zero too, but for a regular file
 * (version 7), which may carry its source token as a single file's offer
 * does: then the ACCEPT may say where each lane resumes, from a partial
 * of that file an earlier attempt left (the sender sends one for a file
 * larger than a digest block, the receiver keeps one from its first
 * checkpoint on; it reads the kept parts back before that ACCEPT, sending
 * an empty CREDIT every second meanwhile, as Sync's digest, because the
 * sender may hold credits from the file before); never ACCEPT PUBLISHED
 * in a session of several. Chunk sequence numbers start at 0 for each file; every
 * lane carries its run of that file, split by that file's blocks
 * (wire_lane_range), and its END that file's lane digest (a run may be
 * empty: the lane sends only its END). The file index in ACCEPT, END and
 * RESULT says which file a message is about (version 8 pipelines the next
 * OFFER: below). The last file's RESULT goes on every lane and ends the
 * session (the sender hangs up); any failure or REFUSE ends it too. Lanes
 * are not ordered between them: another lane's copy of the last RESULT may
 * reach the sender before lane 0's ACCEPT or earlier RESULTs, so a sender
 * takes an "ok" for a file it has not settled from lane 0 only. A
 * session whose connections drop before its last RESULT is a failed job.
 *
 * Pipelining (version 8): "after file i's RESULT" above is relaxed so
 * that the next file's offer and data overlap file i's verify and publish.
 * Below, file i is an offer's (a pack's first entry) and file i + span the
 * next offer's. (rdmaxferd's sender pipelines in a tree; outside one it
 * still waits for the RESULT. A receiver must take either.)
 *   - The sender may post the OFFER of file i + span on lane 0 as soon as
 *     it has posted file i's END on every lane, before file i's RESULT
 *     (and before its last chunks are acknowledged). It posts no further OFFER
 *     (nor WAIT for one) until file i's RESULT "ok" came: at most two
 *     files of a session are in flight, offered without their RESULT.
 *   - The receiver keeps such an OFFER (one; it came after lane 0's END of
 *     file i, RC order) until every lane's END of file i is in and file i
 *     is verified; then it answers it (ACCEPT, or REFUSE, which fails the
 *     session) while file i is published. (It may hold it until file i is
 *     published, too: rdmaxferd does when file i kept a partial, one
 *     partial of a session being handled at a time.) Data of file i + span goes only
 *     after its ACCEPT, so on every lane it follows that lane's END of
 *     file i; its sequence numbers start at 0 again.
 *   - RESULTs go in file order: file i + span's, even when verified (or
 *     skipped) first, only after file i's. A RESULT that is not "ok", or a
 *     REFUSE, may come while either file is in flight: it ends the session
 *     (a tree publishes nothing).
 *   - A third OFFER (file i + span's next, before file i's RESULT), an
 *     OFFER before lane 0's END of file i, or one after the last file's,
 *     is a protocol error: the receiver fails the session.
 *   - A WAIT (Sync, below) for file i + span, the next to be offered, may
 *     come at any time before that offer: while file i's data still
 *     flows, is verified or published.
 *   - The receiver returns credits also after every END of a file came
 *     (and lane 0's straight away once file i is verified), so the next
 *     OFFER has one; each message still costs the sender one credit.
 * The deadlines: waiting for an ACCEPT, the sender holds the receiver to
 * peer_timeout as ever; waiting for a RESULT with every END it sent
 * posted, to peer_timeout of silence too: a receiver with every END of
 * the file it received last (XFER_FINISHING: verifying, waiting for the
 * file before, publishing) sends an empty CREDIT on lane 0 every second
 * until that file's RESULT goes (version 9; version 8 had the sender wait
 * 300 s, however dead the link); the receiver holds the
 * sender to peer_timeout and min_rate for the file whose data flows, and
 * its own disk steps of both files to io_timeout.
 *
 * A tree (WIRE_OFFER_TREE on every offer of the session): the first offer
 * is a directory (WIRE_OFFER_DIR, size 0) whose name is DEST, a relative
 * path beneath the receiver's incoming directory (name_path_check); every
 * later one names an entry beneath it, "DEST/a/b", a directory before what
 * it holds. The receiver builds the tree in a hidden staging directory and
 * renames it into place as DEST only after the last entry is verified: a
 * job that fails publishes nothing. A directory entry carries no data:
 * every lane's run is empty, and only its ENDs go. Every offer of a tree
 * but a pack's carries its entry's mode, exact (07777 bits, 0 for none of
 * them; version 14: before, 0 meant "the receiver's own" and DEST's was
 * always 0), and its mtime (0: none). The receiver keeps the mode less
 * setuid and setgid, and sets a file's once its data is in, a
 * directory's (DEST's too) with its mtime after everything inside it.
 *
 * Packs (version 5): a later OFFER of a tree session may carry
 * WIRE_OFFER_PACK (never with WIRE_OFFER_DIR, never the first): its data
 * is then not one entry's but a pack (common/pack.h) of pack_entries >= 1
 * entries, directories and small files, which are entries file .. file +
 * pack_entries - 1 of the job, in the order they would have been offered
 * one by one. Its size is the pack's bytes (at most PACK_BYTES_MAX), its
 * name DEST, its mode and mtime zero, and pack_hash the SHA-256 over the
 * pack's record headers and names, so the offer's MAC covers every name,
 * mode, mtime and size in it as it covers a single entry's. The pack moves
 * as any file (lanes, ENDs and their digests); the receiver checks the
 * digests, then the pack hash and the count, and makes every entry in the
 * staging directory under the rules a single entry's offer is held to.
 * ACCEPT and RESULT carry the pack's first index (file); the next offer's
 * file is file + pack_entries. job_files counts every entry, packed or
 * not, so the receiver's limits hold either way. From version 9 a pack
 * may hold symlinks too (PACK_LINK, its target as its data), held to
 * tree_symlinks and made at the end as a symlink offered alone is.
 *
 * Hard links (version 15): a link's offer (WIRE_OFFER_LINK) with
 * WIRE_OFFER_HARD, or a PACK_LINK record with PACK_F_HARD, is a hard
 * link: its data (1 .. WIRE_NAME_MAX bytes) is the name of an earlier
 * regular file of the same tree ("DEST/c/d", beneath the session's
 * DEST, not the entry's own name), and the receiver makes the entry
 * another name of that file, at the end with the symlinks. The sender
 * offers a file with several names in the tree once, every other name
 * as a hard link to the first it offered; the receiver never follows a
 * symlink to reach the file, and refuses one that is not a regular file
 * of the tree (or, merged into an existing DEST, of the old DEST). The
 * file's mode and mtime are its first name's. tree_symlinks does not
 * apply: a hard link cannot leave the tree.
 *
 * Sparse files (version 16): a regular file's offer (single, or a
 * tree's entry offered alone; never a pack, a link, a directory, nor an
 * offer along a chain) may carry WIRE_OFFER_SPARSE and data_bytes: the
 * sender leaves out every chunk that lies wholly in a hole of its file
 * (a range that reads as zeros and that SEEK_DATA skips), so a lane's
 * sequence numbers may jump forward, and its END may follow a chunk
 * before its run's last. The chunks left out are zeros: both sides feed
 * them to the lane's digest as such (END's bytes and digest are the
 * whole run's, as ever). The receiver makes the file its offered size
 * without reserving it, writes the chunks that come, and so keeps the
 * holes; it checks free space for data_bytes, and fails the transfer
 * (WIRE_E_SIZE) when more than data_bytes of data arrive.
 *
 * Sync (version 6): every OFFER of a session may carry the job's sync
 * flags (the first offer's; a later offer with others is a protocol
 * error; WIRE_OFFER_DIGEST, which a tree's first offer, DEST, carries with
 * a zero digest to say the session compares digests, goes only on a
 * regular file's offer after it, never on a directory's, a symlink's or a
 * pack's): WIRE_OFFER_SKIP_EXISTING, an entry whose name exists on the
 * receiver is left as it is; WIRE_OFFER_SYNC, a regular file of that name
 * and the offer's size is left as it is (with WIRE_OFFER_DIGEST, only when
 * its digest, digest.h, is the offer's digest too) and one that differs is
 * sent and replaces it where the receiver's overwrite allows (else
 * WIRE_E_EXISTS). An existing entry of another type than the offered one
 * (a directory for a file, or a file for a directory) is WIRE_E_EXISTS; an
 * existing directory where one is offered is merged into. The receiver
 * answers an entry it keeps with an ACCEPT with WIRE_ACCEPT_SKIP (the
 * session's lanes, resume[] zero; a skipped first file of a flat job
 * grants one lane), then at once the entry's RESULT, as for a published
 * one: no data and no END go for it. A pack's entries are held to the same
 * rules when unpacked (its offer never carries WIRE_OFFER_DIGEST; the
 * entry's data is at hand, and compared with the old file's bytes); a
 * pack's RESULT "ok" says "skipped N" when N of its entries were kept, a
 * skipped entry's "skipped" (both covered by the RESULT's MAC). Under
 * WIRE_OFFER_SYNC a symlink's target, its data, is compared once it has
 * arrived: the very same symlink there is kept, and its RESULT says
 * "skipped 1". While the sender reads a later file for its digest, or
 * waits for its owner to hand the next file over (a relay of a tree waits
 * for each entry to be staged on its own node), it
 * sends WAIT (the next file's index) on lane 0 every second, and the
 * receiver, which waits between two files for its peer_timeout, counts
 * it as the sender's progress and gives its credit straight back in a
 * CREDIT; a receiver that reads its own copy for its digest before it
 * answers an offer sends an empty CREDIT (no credits) every second, which
 * the sender, waiting for the ACCEPT, counts as progress: reading a file
 * that takes longer than peer_timeout, on either side, does not end the
 * session. A tree with a sync flag whose DEST exists as a
 * directory is merged into it: what was there and was not sent stays.
 *
 * Deleting (version 16): a tree's offers may carry WIRE_OFFER_DELETE
 * beside WIRE_OFFER_SKIP_EXISTING or WIRE_OFFER_SYNC (never alone, never
 * outside a tree, never on a relay's or a route's offer): merged into an
 * existing DEST, the published tree holds only the entries the session
 * offered, whether sent or kept, and whatever else the old DEST held
 * beneath it is removed in the same step that publishes the tree. A
 * receiver that does not allow it (rdmaxferd: tree_delete = no) refuses
 * DEST's offer with WIRE_E_PERMISSION. The session's last RESULT "ok" (the
 * tree's publishing) ends with "deleted N" when it removed N entries (a
 * directory and each entry in it count; after "skipped..." and "; ").
 * Rules (version 30): on lane 0, right before a deleting tree's first
 * offer (DEST's, with WIRE_OFFER_DELETE; never with WIRE_OFFER_LAND), the
 * sender may post the rules it left entries out by, in RULES parts (a
 * LAND's layout; total 1 .. WIRE_RULES_MAX bytes, each part from where
 * the one before ended, each a credit): text, a rule a line
 * (common/filter.h, filter_list_text: "- PATTERN" or "+ PATTERN"). The
 * offer's MAC covers their SHA-256 and length. Whatever of the old DEST
 * the rules exclude (matched on its path beneath DEST) is kept, as
 * rsync's receiver protects what its excludes leave out: an excluded
 * directory whole, a directory that holds something kept with it; the
 * rest beyond the tree is removed as ever, and only that counts in
 * "deleted N" (and, in a dry run, GONEs). Parts after the offer, or
 * without DELETE, or rules that do not parse, are protocol errors.
 *
 * Index packs (version 24): in a tree session with WIRE_OFFER_SYNC or
 * WIRE_OFFER_SKIP_EXISTING (not a dry run, a landing, a relay's or a
 * route's), a pack's regular files may be indexed rather than carried:
 * their records (PACK_FILE with PACK_F_INDEX, common/pack.h) say each
 * file's size, and carry, as their data, the file's digest (digest.h)
 * where the session compares digests, zeros otherwise. Such an index
 * pack holds at most WIRE_NEED_ENTRIES_MAX records, every indexed file
 * at most PACK_FILE_MAX bytes, and the data of all its files together
 * would fit one pack (PACK_BYTES_MAX). The receiver makes its
 * directories and links as any pack's, and holds each indexed file to
 * the sync rules above against the old DEST's (size; the digest of the
 * old file's bytes with WIRE_OFFER_DIGEST): one it keeps counts as a
 * packed entry kept ("skipped N"). If it keeps them all, the index
 * pack's RESULT follows as for any pack. If not, it sends NEED on lane 0
 * instead of that RESULT (file, the pack's entries, the bit of each
 * record it lacks, needed counting them; its MAC, with a key,
 * HMAC-SHA256(S, "rdmaxfer-v4 receiver need" || file || entries ||
 * needed || bits)), and the session's next offer must be a pack of
 * exactly those files, in order, carried (pack_entries the NEED's
 * needed), with the index pack's own file: its RESULT settles all the
 * index pack's entries, and counts, in "skipped N", the files the index
 * kept too; the offer after it is file + the index pack's entries. A
 * sender offers nothing after an index pack before its RESULT or NEED;
 * an offer that comes before its NEED, a NEED the sender did not ask
 * for (not for its index pack in flight, naming a record that is not an
 * indexed file), an index record outside such a session or among the
 * files a NEED named, and a pack after a NEED that is not of its count
 * are protocol errors. The files that a sync would move anyway thus
 * move alone, and the ones the receiver has cost their names only.
 *
 * Dry runs (version 17): every offer of a session may carry
 * WIRE_OFFER_DRY_RUN (the first offer's; a later one without it, or one
 * with it after a first without, is a protocol error; never with a pack,
 * a route or WIRE_OFFER_RELAYED). The receiver holds each entry to the
 * rules a real session's would meet (names, tree_symlinks, overwrite, the
 * sync flags, max_file_size, the job's limits, tree_delete, a DEST of
 * another type) and makes nothing: no staging directory, no partial, no
 * reservation, no journal entry of a file received. A regular file or a
 * directory is answered with ACCEPT WIRE_ACCEPT_SKIP and at once its
 * RESULT (no data, no END), or with the refusal a real session would
 * get; a link (symlink or hard link) is accepted as ever, because its
 * data, the target, is what the rules judge: it comes (at most
 * NAME_LINK_MAX bytes), is judged, and is never made. A RESULT "ok" of a
 * dry run says the verdict, one of (machine-readable, first word fixed):
 *   "would create"           nothing of that name there
 *   "would replace CSTAX"    something there differs: C is 'c' where the
 *                            digests were compared and differ (else '.'),
 *                            S 's' where the sizes differ, T 't' where the
 *                            mtimes differ (the offer's, when it has one),
 *                            A 'a' where the ACLs differ, X 'x' where the
 *                            user.* attributes do (a landing's with -A,
 *                            -X; version 29: before, three letters)
 *   "skipped"                kept as it is (sync), as in a real session
 *   "exists"                 a directory there, merged into
 * and the session's last RESULT, as in a real session, "; deleted N"
 * after it with WIRE_OFFER_DELETE. Before that last RESULT, on lane 0, the
 * receiver names each entry a real session would remove in a GONE
 * message (seq 0 .. N - 1, in order; what a directory holds before the
 * directory), under the session's MAC; N counts them, as a real
 * session's "deleted N" does. A sender takes a dry run's ACCEPT SKIP for
 * any entry.
 *
 * Long paths (version 18): a later offer of a tree (never the first, never
 * a pack) whose entry's path is longer than WIRE_NAME_MAX bytes (up to
 * WIRE_PATH_MAX) carries WIRE_OFFER_LONG_NAME and no name of its own; on
 * lane 0, right before it, the sender posts the path in NAME messages
 * (total: its length, WIRE_NAME_MAX + 1 .. WIRE_PATH_MAX; offset: where
 * this part's 1 .. WIRE_NAME_PART_MAX bytes go), in order, each from
 * where the one before ended, the last ending at total, each a credit.
 * The receiver assembles them and takes the whole as the offer's name,
 * held to every rule a short one is; the offer's MAC covers it (the MAC
 * input is the offer's with the whole path as its name). A NAME out of
 * order, one of another total, an offer with WIRE_OFFER_LONG_NAME before
 * the last part, or one without it after a part is a protocol error. GONE names at most WIRE_NAME_MAX
 * bytes; a dry run counts a longer one in "deleted N" without a GONE.
 *
 * Landing as the user (version 19): a session whose files are to land
 * as the user who sent them, where that user said (xferctl send FILE...
 * PEER:/PATH), rather than in the receiver's drop box. On lane 0, before
 * the session's first OFFER, the sender posts its landing (struct
 * wire_landing, wire_land_encode: who, by the MUNGE credential the user's
 * xferctl made, bound to PATH, a token and the receiver's address; PATH;
 * whether PATH is a directory the files go into; whether an existing file
 * is replaced) in LAND parts (total, offset, len, bytes), in order, each
 * in the receiver's one control buffer, which it posts again and answers
 * with a CREDIT (credits 1), as a route's first part. The first OFFER
 * then carries WIRE_OFFER_LAND, and its MAC input ends with the SHA-256
 * of the landing's bytes (land_hash: not on the wire, the receiver hashes
 * what it assembled). Every file of the session lands so: regular files,
 * or one tree (version 20: WIRE_OFFER_LAND on DEST's offer, its entries
 * and packs as any tree's), a sync (version 25) or a dry run (version 28:
 * every entry looked at as the user, by the lander's LOOK, and judged as
 * a real landing would be, nothing made; never with DELETE), no tree resumable
 * (a kept tree would sit in the receiver's partial_dir). Version 23: a
 * regular file's offer, straight to its node, may name its source, and
 * the receiver may keep its partial (held open there, as the user's
 * nameless file: rdmaxferd(8), Users and identity) for a retry to resume;
 * a tree's, a directory's or a chain's names none. Version 21: one regular file may go
 * down a relay chain (WIRE_OFFER_ROUTE, and a relay's WIRE_OFFER_RELAYED
 * with a zero source): every node lands it at PATH, and a relay passes
 * the landing on unchanged; the credential names every node of the
 * chain (up to WIRE_LAND_ADDRS_MAX). The receiver takes nothing from the credential itself:
 * its lander decodes it (landmsg.h) and refuses what it does not prove;
 * a receiver that lands no user's files refuses the offer (WIRE_E_PERMISSION).
 * A LAND part after the first offer, out of order, or an offer with
 * WIRE_OFFER_LAND before the whole landing, or without it after a part, is
 * a protocol error.
 *
 * Attributes (version 27; xferctl send -X, -A): a landing push whose
 * flags carry WIRE_LAND_XATTRS (user.* extended attributes) or
 * WIRE_LAND_ACLS (POSIX ACLs) sends each entry's with it,
 * as records of xattrs.h (at most WIRE_XATTRS_MAX bytes an entry): the
 * first file's, or the tree's DEST's, in the landing itself (xattrs_len,
 * after its path); a later entry offered alone's in XATTR parts on lane 0
 * right before its offer (and its NAME parts), as NAME's (total: 1 ..
 * WIRE_XATTRS_MAX, offset, len, bytes; no NUL rule), the offer's MAC
 * input ending with their length (u16) and SHA-256 (xattrs_len,
 * xattrs_hash: not on the wire); a packed entry's in its record
 * (PACK_F_XATTRS, pack.h), which the pack hash covers. An entry without
 * any carries none. The receiver sets them as the user (rdmaxfer-lander),
 * before a file's name or a directory's mode: a tree's once its entries
 * are in, a file's before it is linked; with WIRE_LAND_ACLS an entry
 * without an ACL loses one its directory's default gave it there. XATTR
 * parts outside such a session, on a pack's or the first offer, out of
 * order, or an offer before their last one, are protocol errors, as are
 * records xattrs_check() refuses (a name of another namespace, twice).
 * Relays, chains and dry runs carry none (xferctl refuses). A
 * pull's landing (WIRE_LAND_PULL) may carry the two flags too, and no
 * records: the pulled side reads the file's or tree's attributes as the
 * user (its lander) and its send back carries them so.
 *
 * Pulls (version 21): a landing whose direction is WIRE_LAND_PULL asks
 * the receiver for the file at its path, read as the user its credential
 * proves (xferctl get PEER:/PATH DEST), rather than to land one. Its
 * session is one offer: a regular file of size 0 named for PATH's leaf,
 * job_files 1, with WIRE_OFFER_LAND and nothing else (no tree, sync,
 * route, dry run, sparse or source). The receiver's lander opens the file
 * as the user (a regular file, or WIRE_E_PERMISSION / WIRE_E_NAME with
 * its reason: nothing is sent); its daemon then sends it, as an ordinary
 * landing of its own (its landing PUSH, the pull's token, back_flags,
 * back_addr, back_cred, back_path), to back_addr:back_port, which must be
 * one of the landing's addresses (the asking node's, or with xferctl send
 * PEER_A:/x PEER_B:/y another's: the credential names where it may go).
 * Meanwhile it answers nothing but an empty CREDIT every second, which
 * the asking side, waiting for the ACCEPT, counts as progress; once that
 * transfer has ended it answers ACCEPT with WIRE_ACCEPT_SKIP and the
 * RESULT "ok" (the file landed), or a REFUSE with the send's status and
 * reason. The asking side hangs up to cancel: the send back is cancelled.
 *
 * A tree pulled (version 25, xferctl get -r): a PULL landing with
 * WIRE_LAND_TREE (its credential says so too: the lander reads a
 * directory only then) may name a directory. The receiver's lander walks
 * it as the user (landmsg.h, "A tree pulled"): the count first, so that
 * an entry that could not be sent (a device, FIFO or socket, a file the
 * user may not read) refuses the pull before anything goes; then its
 * daemon sends it back as a tree of its own (DEST the directory's leaf,
 * its entries as the walker gives them, hard links and symlinks as
 * xferctl send -r sends them), landing as the user at back_path. The
 * asking side waits and is answered as for a file.
 *
 * A pull kept up to date (version 26, xferctl get [-r] --sync): the
 * pull's offer may carry WIRE_OFFER_SKIP_EXISTING, or WIRE_OFFER_SYNC
 * and WIRE_OFFER_DIGEST (its digest zero: a way of syncing, no file's);
 * the send back syncs so, with what the asking side has at back_path
 * (its way back's credential says so too). Version 27 (xferctl get -r
 * --sync --delete): a tree's pull (WIRE_LAND_TREE) may carry
 * WIRE_OFFER_DELETE with a sync flag too, and the send back deletes so:
 * the tree at back_path ends with the pulled tree's entries; on a
 * file's pull, or a pushed file's offer, DELETE is refused. The pull's
 * RESULT "ok" then says what the send back found there already,
 * "skipped N" (N entries kept), and "; deleted M" after it when it
 * deleted, as a tree's last RESULT does.
 *
 * Resuming a tree (version 7; a later file's partial, above): a tree's first OFFER (DEST) may carry a
 * source token, the job's own (random, the same in every attempt of that
 * job; zero: not resumable). A receiver that kept the staging directory
 * of an earlier attempt of the same job (the same peer and key, DEST,
 * job_files, job_bytes, chunk size and token) answers with an ACCEPT
 * with WIRE_ACCEPT_RESUMED and resume[0] = n, the entries it holds
 * (DEST is entry 0, so n >= 1); DEST's ENDs and RESULT follow as ever,
 * and the sender's next OFFER is entry n, not 1 (a pack from n, as
 * packs go). n = job_files: every entry is there, and DEST's RESULT is
 * the session's last (rdmaxferd answers so a retry of a job whose tree
 * it published already, its last RESULT lost: nothing is made again). The receiver
 * records n before each entry's RESULT goes, so it never holds fewer
 * entries than the sender saw acknowledged; a sender that no longer has
 * entry n (it was acknowledged and let go) fails the job. An entry the
 * receiver staged after its last record may come again: it replaces
 * what the staging directory has under that name.
 *
 * Relay chains (version 10): one file to several nodes in about the time
 * of one transfer. The route is the nodes after the receiver, in order,
 * at most WIRE_ROUTE_MAX (a chain of 512 nodes). The sender's lane 0
 * sends its first ROUTE part (hops 0 .. WIRE_ROUTE_PART_MAX - 1, with the
 * route's total) before the session's first OFFER, which then carries
 * WIRE_OFFER_ROUTE and route_hash, the SHA-256 of the whole route
 * (wire_route_hash), under the offer's MAC with a key: nobody can splice
 * a hop in. That part lands in the receiver's one control buffer before
 * the offer: the receiver posts it again and answers with a CREDIT
 * (credits 1) for the OFFER. The rest of a longer route (version 11)
 * follows in order on lane 0 once the offer is accepted, before lane 0's
 * first chunk, each part a control message in a ring slot like END: so
 * an unauthenticated sender never makes the receiver hold more than one
 * control message of it. The receiver checks route_hash when it has the
 * whole route (before it if the first part is all of it), relays only
 * then, and fails the transfer (WIRE_E_PROTOCOL) on a hash that differs,
 * a part out of order, or lane 0's END before the last part. A route
 * carries one regular file (job_files 1) or one tree (its DEST offer
 * names the route), never with sync; a receiver that does not relay
 * (rdmaxferd: relay = no) refuses it with WIRE_E_DENIED. A relay of a
 * tree sends it to the next hop as a session of its own: DEST at once
 * (WIRE_OFFER_RELAYED, the origin's tree token: a node that kept a part
 * of the tree from the failed hop before it, or from an earlier attempt,
 * continues after it as from an origin's retry, version 12), then each
 * entry once it is staged here (a pack's entries one by one, packed
 * again as the relay's sender sees fit), but a regular file too large
 * for a pack as soon as it is accepted here, sent while it comes in as a
 * file's relay sends one (below: gated on what is written, its ENDs once
 * verified). The rest of this paragraph is of a file's relay; the
 * RESULT's hop fields are the same for both. One that does becomes the
 * sender of the same file to the route's first hop, with the rest of the
 * route, as soon as it has accepted it: it sends each chunk once the
 * bytes are written on its side, and its ENDs only once its own copy is
 * verified, so a relay never vouches for bytes it did not check. Its
 * RESULT waits for the downstream's (XFER_FINISHING: the empty CREDIT
 * every second keeps its sender waiting) and says what became of the
 * route: hops, the route's nodes that published the file, hop_missing,
 * a bit for each that did not (bit k: hop k + 1; a 512-bit set, version
 * 11), and the first of those
 * (hop_failed, 1-based; 0 none) with its status and, in the text, why.
 * A relay whose next hop fails (refuses, dies, stalls) goes around it:
 * it sends the file to the hop after it, with the rest of the route, and
 * so on; a hop is missing only when it failed itself or the relay before
 * it could not go on. The relay's own copy is published either way; the
 * RESULT's status is its own. A relay's offers carry WIRE_OFFER_RELAYED
 * and the source token and transfer id of the offer it received (the
 * origin's), so a hop gone around continues where the failed one left
 * it: its receiver keeps a partial of a relayed offer without the
 * sender's address in its identity (the key's id, name, size, chunk
 * size and source token remain), and the next relayed offer of that
 * file, from whichever node, resumes it as an origin's retry would. The
 * kept chunks are trusted no more than the wire: the receiver hashes
 * them again into each lane's digest, and the relay's END digests are
 * over its own copy (its lanes hash their resumed chunks from its file,
 * never before they are written there), so bytes another node left that
 * differ fail the transfer (WIRE_E_CHECKSUM, the partial removed)
 * rather than being published. Meanwhile, about once a second, a relay
 * tells its sender how far each hop of its route got (PROGRESS, on lane
 * 0: its downstream's acknowledged bytes for the hop it sends to, and
 * what that one's PROGRESS said of those after it), for display only:
 * WIRE_PROGRESS_PART_MAX hops at a time, the next window every second
 * (hop 0 on, round the route; version 11).
 *
 * Lanes: a transfer may be striped over several connections (RC queue
 * pairs), so that one transfer is not held to what one QP can move. The
 * OFFER goes over the first connection (lane 0) and asks for up to
 * WIRE_LANES_MAX lanes; the ACCEPT grants some number of them. The sender
 * then connects the other lanes with a hello that names the lane and
 * carries the offer's random token. The file's 1 MiB digest blocks (its
 * chunks, where they are larger) are split into contiguous runs, one per
 * lane (wire_lane_range), so a lane starts on a block boundary (the chunk
 * size is a power of two dividing WIRE_GROUP_SIZE) and no lane is granted
 * without a block of the job's bytes of its own (in a session, a file of
 * fewer blocks than lanes leaves some lanes empty runs); each lane
 * carries only its own run of chunks, in order, then its own END.
 * Version 13: 1 MiB digest blocks in 64 MiB groups (digest.h), so a file
 * of a few MiB is striped over every lane; the lane split and the digest
 * both changed (they were 64 MiB blocks). Version 12: a chain's tree resumes. Version 11: routes of 512 nodes. Version 10: relay chains. Version 9: the receiver says it verifies. Version 8: pipelining. Version 7: a tree resumes. Version 6: sync. Version 5: packs. Version 4: sessions, the block-aligned
 * runs, END's digest over blocks and resuming (version 3 carried one file per connection, split
 * chunks evenly and hashed each lane's bytes whole). On every lane the receiver answers with
 * the transfer's RESULT once the whole file is verified and published.
 *
 * Rails (version 22): a node may have several RDMA devices, each with
 * its own address (rdmaxferd.conf(5), listen). A sender with more than
 * one rail up sets WIRE_OFFER_RAILS on the session's first offer: its
 * later lanes may then come from any of its addresses, not only lane 0's
 * (with a key each lane's tag proves it, bound to that lane's own two
 * addresses; without one the token is all a lane shows, as ever). A
 * receiver with more than one rail answers such an offer with
 * WIRE_ACCEPT_RAILS and its rails (address and port of each listener,
 * the one lane 0 arrived on first, those whose port is down left out),
 * under the ACCEPT's MAC. The sender pairs each of its rails with a rail
 * of the receiver's in the same subnet (rails_pair, common/rails.h) and
 * spreads the lanes over the pairs, lane 0 on lane 0's path, the others
 * by what each pair delivered before (rails_assign: round the pairs
 * until measured); with no ACCEPT rails, or no pair, every lane goes
 * where lane 0 went. Which lane goes over which pair is the sender's
 * alone: the receiver takes a lane on whichever rail it arrives.
 *
 * A rail lost under a transfer (version 23): while one file's data flows
 * (not a session's next files, a relay's or a chain's, a sparse file's),
 * a lane whose rail fails on either side (its port down, its device gone;
 * for a lane but lane 0, its connection broken) is not the transfer's
 * end. (A connection that breaks on lane 0's rail waits a moment for
 * its port's word: a link going down breaks connections first.) The receiver keeps the lane (what it received of its run, its
 * digest, its slots) without a connection; the sender tears its side
 * down and connects the lane again over another rail pair that is up
 * (lane 0's, unless that is the one lost) with a lane hello that adds
 * WIRE_HELLO_REJOIN (under the lane tag, whose input has the flags; lane
 * 0 too, with WIRE_HELLO_LANE and lane 0, the only hello that names it).
 * The receiver takes it for the lane it names, if that lane has not
 * ended, replacing its old connection if it still had one, and the
 * WELCOME's resume says how many chunks of the lane's run it has, in
 * order; the sender goes back to there (anything it had posted beyond
 * is sent again, its lane digest hashed again from its file up to
 * there) and the run goes on as ever, the END's digest covering it
 * whole. A resume beyond what the sender posted is a protocol error. A
 * lane that had sent its END joins again too: if the receiver has it,
 * the WELCOME says WIRE_WELCOME_ENDED and the lane is done; if not (the
 * END lost with the rail, and chunks before it perhaps), the run goes on
 * from resume as any lane's, and its END is sent again. A sender joins
 * at most twice as many lanes again as the transfer has. A
 * lane 0 that joined again carries the transfer's control messages from
 * then on as before; its first message is data (no control buffer for an
 * offer is posted for it).
 *
 * Authentication (both sides configured with the same pre-shared key K;
 * the hello's WIRE_HELLO_KEY and the welcome's WIRE_WELCOME_AUTH say that
 * a side has one, and a side with a key refuses a peer without one):
 *
 *   binding   the connection's two ends as both sides see them: the
 *             sender's IP address, the receiver's IP address (16 bytes
 *             each, IPv4 as ::ffff:a.b.c.d) and the receiver's listening
 *             port (u16). Not the sender's port: that one is ephemeral.
 *   OFFER     mac = HMAC-SHA256(K, "rdmaxfer-v4 sender offer" || Nr ||
 *             binding(lane 0) || the offer's fields but the mac)
 *             (the labels kept their "v4" in versions 5 to 10: the
 *             version is checked in the hello, before any MAC; the
 *             fields include version 6's digest and version 10's
 *             route_hash)
 *   next      a later OFFER of the session (file > 0):
 *   OFFER     mac = HMAC-SHA256(S, "rdmaxfer-v4 sender next offer" ||
 *             the offer's fields but the mac)
 *   session   S = HKDF-SHA256(IKM K, salt Nr || Ns,
 *             info "rdmaxfer-v4 session" || the OFFER's mac), 32 bytes
 *   ACCEPT    mac = HMAC-SHA256(S, "rdmaxfer-v4 receiver accept" || lanes ||
 *             flags || file || resume[0..7] [|| nrails || rails]) (the
 *             rails with WIRE_ACCEPT_RAILS, version 22)
 *   lane      tag = HMAC-SHA256(S, "rdmaxfer-v4 sender lane" ||
 *             binding(that lane) || flags || lane || token), first 16 bytes
 *   END       mac = HMAC-SHA256(S, "rdmaxfer-v4 sender end" || lane ||
 *             file || bytes || digest)
 *   RESULT    mac = HMAC-SHA256(S, "rdmaxfer-v4 receiver result" || lane ||
 *             status || text_len || file || bytes || usec || hops ||
 *             hop_failed || hop_status || hop_missing || text) (the hop
 *             fields from version 10)
 *   GONE      mac = HMAC-SHA256(S, "rdmaxfer-v4 receiver gone" || file ||
 *             seq || kind || name_len || name) (version 17)
 *
 * Each side's nonce makes every proof fresh; the labels name the role and
 * the message, so no proof passes for another; the binding ties the offer
 * (and through S everything after it) to the two hosts, so a host that
 * relays one peer's messages to another is refused. The file index in
 * the later messages keeps one file's proof from passing for another's
 * within a session. S proves the receiver
 * holds K too: the sender sends no data before a good ACCEPT and counts a
 * transfer done only on a good RESULT "ok". The data itself is not MACed
 * (that would cost per byte): END's digest is XXH3, which detects
 * corruption, not a forger on the path. REFUSE and REJ carry no MAC: they
 * can only fail a transfer. Without a key every mac, tag and Ns is zero
 * and nobody checks them. Integers in MAC inputs are little-endian as on
 * the wire.
 *
 * Every sender->receiver message (control or data) consumes one credit; the
 * receiver returns credits in the header of every message it sends. All
 * integers are little-endian on the wire, except the immediate, which is
 * big-endian as verbs conventionally carries it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "nodeset.h"

#define WIRE_MAGIC              0x58524452u     /* "RDRX" little-endian */
/* The protocol's version, and what each added:
 *   30: a deleting tree's rules (RULES: Deleting, above): what they
 *     leave out the receiver keeps;
 *   29: a landing's dry run with DELETE (what deleting would remove, the
 *     receiver's lander listing the tree there as the user), and with
 *     attributes (a verdict's letters for ACLs and user.* attributes);
 *   28: a landing's dry run (WIRE_OFFER_DRY_RUN with WIRE_OFFER_LAND: the
 *     receiver's lander looks as the user; never with DELETE);
 *   27: extended attributes and ACLs (WIRE_LAND_XATTRS, _ACLS, XATTR,
 *     PACK_F_XATTRS: Landing as the user, below); a pulled tree mirrored
 *     (a pull's DELETE);
 *   26: a tree that lands as its user syncs (merged into the one there,
 *     or with DELETE put in its place); a pull syncs what it sends back;
 *   25: a tree pulled (WIRE_LAND_TREE: Pulls, above); files that land as
 *     their user may sync (WIRE_OFFER_LAND);
 *   24: index packs (PACK_F_INDEX, NEED: Index packs, above);
 *   23: a user's file resumes (a landing's offer with its source token);
 *   22: rails (WIRE_OFFER_RAILS, the ACCEPT's rails: Rails, above);
 *   21: pulls (WIRE_LAND_PULL: the receiver reads the file as the user and
 *       sends it back; Pulls, below); a landing's file down a relay chain,
 *       its addresses up to 512;
 *   20: a tree that lands as the user (WIRE_OFFER_LAND on DEST's offer);
 *   19: landing as the user (LAND, WIRE_OFFER_LAND);
 *   18: paths of up to 4095 bytes (WIRE_OFFER_LONG_NAME, NAME);
 *   17: dry runs (WIRE_OFFER_DRY_RUN, GONE);
 *   16: sparse files (WIRE_OFFER_SPARSE, data_bytes), a synced tree's
 *     deletions (WIRE_OFFER_DELETE);
 *   15: hard links (WIRE_OFFER_HARD, PACK_F_HARD);
 *   14: a tree's modes exact (0: none of the bits), DEST's and directories'
 *     mtimes;
 *   13: 1 MiB digest blocks in 64 MiB groups, lanes split by them;
 *   12: a chain's tree resumes (a relayed DEST);
 *   11: routes of 512 nodes;
 *   10: relay chains (ROUTE);
 *   9: the receiver says it is verifying;
 *   8: two files in flight;
 *   7: trees resume;
 *   6: sync;
 *   5: packs;
 *   4: sessions, block digest, resuming.
 */
#define WIRE_VERSION            30
/* Files of a session offered and not yet answered with a RESULT, at most (version 8). */
#define WIRE_IN_FLIGHT_MAX      2
#define WIRE_HEADER_SIZE        16
#define WIRE_NONCE_SIZE         32
#define WIRE_MAC_SIZE           32              /* HMAC-SHA256 */
#define WIRE_TAG_SIZE           16              /* HMAC-SHA256, truncated: a lane hello's */
#define WIRE_ADDR_SIZE          16              /* an IP address in a binding */
#define WIRE_DIGEST_SIZE        16              /* XXH3-128, canonical form */
#define WIRE_NAME_MAX           255             /* bytes, without NUL: a name in one message */
/* A tree entry's path ("DEST/a/b"), bytes without NUL: PATH_MAX less its
 * NUL, in NAME parts before its offer when over WIRE_NAME_MAX (version 18). */
#define WIRE_PATH_MAX           4095
#define WIRE_NAME_PART_MAX      480             /* bytes of a path one NAME carries */
#define WIRE_TEXT_MAX           200             /* bytes, without NUL */
#define WIRE_CTRL_MAX           520             /* largest control message (version 16: 512 before) */
#define WIRE_TOKEN_SIZE         16
#define WIRE_SOURCE_SIZE        16              /* an OFFER's source identity token */
#define WIRE_LANES_MAX          8
#define WIRE_RAILS_MAX          4               /* a node's rails (RDMA devices) an ACCEPT names */
#define WIRE_PACK_HASH_SIZE     32              /* SHA-256 (common/pack.h) */
#define WIRE_ROUTE_HASH_SIZE    32              /* SHA-256 of a ROUTE (wire_route_hash) */
/* Landing as the user (version 19): a landing's addresses at most, its
 * MUNGE credential's bytes, what one LAND part carries, a landing whole
 * at its longest, and its hash. */
#define WIRE_LAND_ADDRS_MAX     512     /* a relay chain's nodes (version 21) */
#define WIRE_LAND_CRED_MAX      2048
#define WIRE_LAND_PART_MAX      480
#define WIRE_LAND_FIXED         (1 + 1 + 2 + WIRE_TOKEN_SIZE + 2 + 2)
/* A pull's way back (version 21): port, flags, two lengths, its rate, the address. */
#define WIRE_LAND_BACK_FIXED    (2 + 1 + 2 + 2 + 8 + WIRE_ADDR_SIZE)
#define WIRE_LAND_MAX           (WIRE_LAND_FIXED + WIRE_LAND_ADDRS_MAX * WIRE_ADDR_SIZE + WIRE_LAND_CRED_MAX + \
                                 WIRE_PATH_MAX + WIRE_LAND_BACK_FIXED + WIRE_LAND_CRED_MAX + WIRE_PATH_MAX)
#define WIRE_LAND_HASH_SIZE     32
/* An entry's attributes (xattrs.h's XATTRS_BYTES_MAX), in XATTR parts. */
#define WIRE_XATTRS_MAX         4095
#define WIRE_XATTRS_HASH_SIZE   32
/* A deleting tree's rules (version 30), in RULES parts: their text. */
#define WIRE_RULES_MAX          4095
#define WIRE_RULES_HASH_SIZE    32
/* Hops a route names at most (a chain of 512 nodes), and what one ROUTE
 * or PROGRESS message carries of them. */
#define WIRE_ROUTE_MAX          511
#define WIRE_ROUTE_PART_MAX     27
#define WIRE_PROGRESS_PART_MAX  60
/* The digest's block (digest.h), and the unit of the lane split (a chunk,
 * where chunks are larger); its group, which every chunk size divides
 * (version 13: blocks of 1 MiB in groups; before, blocks of 64 MiB). */
#define WIRE_BLOCK_SIZE         (1u << 20)
#define WIRE_GROUP_SIZE         (64u << 20)

/* Private data sizes (rdma_cm allows 56 bytes on REQ, 196 on REP, 148 on REJ). */
#define WIRE_HELLO_SIZE         44
#define WIRE_WELCOME_SIZE       52
#define WIRE_REJECT_SIZE        12

enum wire_type {
        WIRE_OFFER = 1,
        WIRE_ACCEPT = 2,
        WIRE_REFUSE = 3,
        WIRE_CREDIT = 4,
        WIRE_END = 5,
        WIRE_RESULT = 6,
        WIRE_WAIT = 7,          /* version 6: the next offer is coming (Sync) */
        WIRE_ROUTE = 8,         /* version 10: the hops to relay to (Relay chains) */
        WIRE_PROGRESS = 9,      /* version 10: how far the route's hops got (Relay chains) */
        WIRE_GONE = 10,         /* version 17: what a dry run's --delete would remove (Dry runs) */
        WIRE_NAME = 11,         /* version 18: a part of the next offer's long path (Long paths) */
        WIRE_LAND = 12,         /* version 19: a part of the session's landing (Landing as the user) */
        WIRE_NEED = 13,         /* version 24: an index pack's files the receiver lacks (Index packs) */
        WIRE_XATTR = 14,        /* version 27: a part of the next offer's attributes (Attributes) */
        WIRE_RULES = 15,        /* version 30: a part of a deleting tree's rules (Deleting) */
        _WIRE_TYPE_MAX,
};

/*
 * Outcome of a transfer or a refusal, as carried in REJ, REFUSE and RESULT.
 * Stable numbers: they travel between daemons of different builds.
 */
enum wire_status {
        WIRE_OK = 0,
        WIRE_E_VERSION = 1,     /* protocol version not supported */
        WIRE_E_PROTOCOL = 2,    /* malformed or unexpected message */
        WIRE_E_BUSY = 3,        /* no receive slots free for another transfer */
        WIRE_E_DENIED = 4,      /* peer address not allowed */
        WIRE_E_AUTH = 5,        /* missing or wrong pre-shared key proof */
        WIRE_E_NAME = 6,        /* name not acceptable */
        WIRE_E_EXISTS = 7,      /* a file of that name exists, overwrite off */
        WIRE_E_TOO_LARGE = 8,   /* larger than max_file_size */
        WIRE_E_NO_SPACE = 9,    /* not enough free space on the receiver */
        WIRE_E_IO = 10,         /* receiver-side I/O error */
        WIRE_E_CHECKSUM = 11,   /* whole-file checksum mismatch */
        WIRE_E_SIZE = 12,       /* byte count mismatch */
        WIRE_E_SHUTDOWN = 13,   /* receiver is shutting down */
        WIRE_E_INTERNAL = 14,
        WIRE_E_PERMISSION = 15, /* the receiver may not make or change the entry */
        _WIRE_STATUS_MAX,
};

/*
 * What each status means to its sides, from one table (wire.c): every
 * question below is answered there, and a status this build does not
 * know (a newer peer's) is "unknown status", permanent, a failure, not
 * worth keeping anything for.
 */
/* Human text for a status ("checksum mismatch"); never NULL. */
const char *wire_status_str(unsigned int status);
/* Its short, stable name ("checksum"): a JSON key and a metrics label;
 * NULL for a status this build does not know. */
const char *wire_status_name(unsigned int status);
/*
 * Whether a receiver's refusal or verdict with @status may go another way
 * if the same transfer is offered again later: busy, shutting down, an
 * I/O error, internal trouble, data that arrived damaged (checksum, size).
 * False for what a new offer would get again (version, protocol, denied,
 * auth, name, exists, too large, no space, permission).
 * rdmaxferd(8), Retrying, explains the choices.
 */
bool wire_status_transient(unsigned int status);
/* Whether @status is the receiver saying no to the job as offered (the
 * user reads "refused"), not something that went wrong on the way. */
bool wire_status_refusal(unsigned int status);
/* Whether what a failed session with @status staged is worth keeping for
 * the job's next attempt: not when that attempt would fail the same way,
 * or when keeping it holds what the receiver lacks (space). */
bool wire_status_keeps(unsigned int status);
/*
 * The status of a receiver's failed system call with @err (an errno):
 * no space (ENOSPC, EDQUOT), permission (EACCES, EPERM, EROFS), a name
 * too long (ENAMETOOLONG), too large (EFBIG), else an I/O error, which
 * may pass. Where an errno means more in its place (ELOOP on the way to
 * DEST: the peer's name), the caller says so instead.
 */
unsigned int wire_status_of_errno(int err);

struct wire_hello {
        uint32_t magic;
        uint16_t version;
        uint16_t flags;         /* WIRE_HELLO_LANE, WIRE_HELLO_KEY, WIRE_HELLO_REJOIN */
        uint16_t lane;          /* with WIRE_HELLO_LANE: 1 .. lanes-1; else 0 */
        uint16_t reserved;
        uint8_t token[WIRE_TOKEN_SIZE]; /* with WIRE_HELLO_LANE: the offer's */
        uint8_t tag[WIRE_TAG_SIZE];     /* with both flags: proves the session key */
};

/* This connection joins a transfer already accepted on lane 0. */
#define WIRE_HELLO_LANE         0x0001u
/* The sender holds a pre-shared key (and will prove it). */
#define WIRE_HELLO_KEY          0x0002u
/* Version 23, with WIRE_HELLO_LANE: this lane was connected and lost its
 * rail (Rails, "A rail lost under a transfer"): it replaces that
 * connection, and the WELCOME says where its run goes on (resume). */
#define WIRE_HELLO_REJOIN       0x0004u

struct wire_welcome {
        uint32_t magic;
        uint16_t version;
        uint16_t flags;         /* WIRE_WELCOME_AUTH: an OFFER must carry a MAC */
        uint32_t credits;       /* receive slots posted for this connection */
        uint32_t slot_size;     /* largest message the receiver accepts */
        uint32_t resume;        /* a rejoined lane's: chunks of its run the receiver has */
        uint8_t nonce[WIRE_NONCE_SIZE];
};

#define WIRE_WELCOME_AUTH       0x0001u
/* Version 23, to a lane joining again: the receiver has its whole run and
 * its END (resume is the run's length); nothing more is to come on it. */
#define WIRE_WELCOME_ENDED      0x0002u

struct wire_reject {
        uint32_t magic;
        uint16_t version;       /* the version the rejecting side speaks */
        uint16_t status;        /* enum wire_status */
        uint32_t reserved;
};

/* A node (a hop of a route, a rail): an IP address as a binding carries
 * it, and a port. */
struct wire_hop {
        uint8_t addr[WIRE_ADDR_SIZE];
        uint16_t port;
};

struct wire_offer {
        uint64_t transfer_id;   /* sender's job id, for logs on both sides */
        uint64_t size;          /* file size in bytes */
        uint32_t chunk_size;    /* bytes per data message (last may be short) */
        uint16_t flags;         /* WIRE_OFFER_*; else 0 */
        uint16_t lanes;         /* connections the sender would use, 1 .. WIRE_LANES_MAX */
        uint32_t file;          /* index in the session, < job_files */
        uint32_t job_files;     /* files in the whole job, >= 1 */
        uint64_t job_bytes;     /* bytes in the whole job */
        uint32_t mode;          /* in a tree: the entry's permission bits (07777), exact */
        uint64_t mtime_ns;      /* in a tree: a file's mtime, ns since the epoch, 0: not kept */
        uint8_t token[WIRE_TOKEN_SIZE]; /* random; the other lanes' hellos carry it */
        /* The source file's identity as the sender sees it now (device,
         * inode, size, mtime, hashed): a receiver resumes only a partial
         * of the same source. Zero: not resumable. */
        uint8_t source[WIRE_SOURCE_SIZE];
        uint8_t nonce[WIRE_NONCE_SIZE]; /* the sender's (Ns); zero without a key */
        uint8_t mac[WIRE_MAC_SIZE];
        /* With WIRE_OFFER_PACK: the entries the pack holds, file .. file +
         * pack_entries - 1 of the job, and its pack hash (common/pack.h).
         * Zero without. */
        uint32_t pack_entries;
        uint8_t pack_hash[WIRE_PACK_HASH_SIZE];
        /* With WIRE_OFFER_DIGEST: the file's digest (digest.h), for the
         * receiver to compare with its own copy's. Zero without. */
        uint8_t digest[WIRE_DIGEST_SIZE];
        /* With WIRE_OFFER_ROUTE: SHA-256 of the ROUTE that came before
         * (wire_route_hash). Zero without. */
        uint8_t route_hash[WIRE_ROUTE_HASH_SIZE];
        /* With WIRE_OFFER_SPARSE: the bytes of the chunks the sender will
         * send, <= size. Zero without. */
        uint64_t data_bytes;
        /* NUL-terminated after decode; with WIRE_OFFER_LONG_NAME empty
         * there, the NAME parts' path once the receiver has them all. */
        char name[WIRE_PATH_MAX + 1];
        /* Not on the wire (version 27, Attributes): the bytes of the
         * XATTR parts that came right before the offer (0: none), and
         * their SHA-256, which the offer's MAC covers; the sender sets
         * them from the entry's, the receiver from the parts it has. */
        uint16_t xattrs_len;
        uint8_t xattrs_hash[WIRE_XATTRS_HASH_SIZE];
        uint8_t xattrs[WIRE_XATTRS_MAX];        /* the receiver's: the parts' bytes */
        /* Not on the wire (version 30, Deleting): the bytes of the RULES
         * parts that came before a tree's first offer (0: none), and their
         * SHA-256, which the offer's MAC covers. */
        uint16_t rules_len;
        uint8_t rules_hash[WIRE_RULES_HASH_SIZE];
        /* With WIRE_OFFER_LAND, not on the wire: the SHA-256 of the LAND
         * parts' whole (wire_land_hash), which the offer's MAC covers; the
         * receiver sets it from the parts it assembled before it checks. */
        uint8_t land_hash[WIRE_LAND_HASH_SIZE];
};

/* The session is a tree: the names are paths, the first is DEST (above). */
#define WIRE_OFFER_TREE         0x0001u
/* The entry is a directory (with WIRE_OFFER_TREE; size 0). */
#define WIRE_OFFER_DIR          0x0002u
/* The data is a pack of several entries (with WIRE_OFFER_TREE; version 5). */
#define WIRE_OFFER_PACK         0x0004u
/* The entry is a symlink (with WIRE_OFFER_TREE): its data, 1 to
 * NAME_LINK_MAX bytes, is the target. The receiver makes it a symlink,
 * never follows it, and holds its target to its tree_symlinks policy. */
#define WIRE_OFFER_LINK         0x0008u
/* Sync (version 6, above): leave an entry the receiver has under the name
 * as it is. Every offer of the session carries the first one's. */
#define WIRE_OFFER_SKIP_EXISTING 0x0010u
/* ... skip a regular file of the same size (with WIRE_OFFER_DIGEST: and
 * the same digest); send, replacing it, one that differs. */
#define WIRE_OFFER_SYNC         0x0020u
/* The offer's digest is set (with WIRE_OFFER_SYNC, never with a pack). */
#define WIRE_OFFER_DIGEST       0x0040u
/* A ROUTE came before this offer (a session's first, version 10): the
 * receiver relays the file to the route's first hop (Relay chains). */
#define WIRE_OFFER_ROUTE        0x0080u
/* A relay's offer (version 10, Relay chains): the file is passed on, and
 * its source token is the origin's. The receiver leaves the sender's
 * address out of a partial's identity, so that the node before a hop
 * that failed, going around it, continues what that hop sent. Only on a
 * session's first offer, of one regular file (job_files 1) or a tree's
 * DEST (version 12; its token the origin's tree token), without a pack
 * or sync: anything else is malformed. */
#define WIRE_OFFER_RELAYED      0x0100u
/* With WIRE_OFFER_LINK: a hard link (version 15, "Hard links" above). */
#define WIRE_OFFER_HARD         0x0200u
/* A sparse file: chunks wholly in its holes are not sent ("Sparse
 * files", version 16); its data_bytes says how many bytes are. */
#define WIRE_OFFER_SPARSE       0x0400u
/* With WIRE_OFFER_TREE and WIRE_OFFER_SKIP_EXISTING or WIRE_OFFER_SYNC:
 * DEST, once published, holds only the entries the session offered
 * (version 16, "Deleting" above). A sync flag: on every offer. */
#define WIRE_OFFER_DELETE       0x0800u
/* A dry run (version 17, "Dry runs" above): judge every entry as a real
 * session would, make nothing. On every offer of the session. */
#define WIRE_OFFER_DRY_RUN      0x1000u
/* The entry's path came in NAME parts before the offer, which carries
 * none itself (version 18, "Long paths" above; only a later offer of a
 * tree, never a pack's). */
#define WIRE_OFFER_LONG_NAME    0x2000u
/* The session lands as a user (version 19, "Landing as the user"
 * above): the session's first offer, of a regular file or a tree's DEST,
 * no pack (a dry run from version 28); LAND parts came before it, and its MAC covers
 * their whole (land_hash). Files (no route or relay) may sync
 * (version 25): the receiver's lander looks at what is there as the
 * user; a tree too (version 26): merged into the one there, or with
 * DELETE put in its place. */
#define WIRE_OFFER_LAND         0x4000u
/* The sender stripes over several rails (version 22, Rails above): the
 * transfer's later lanes may come from other addresses than lane 0's, and
 * the session's first ACCEPT names the receiver's rails. Only on a
 * session's first offer. */
#define WIRE_OFFER_RAILS        0x8000u
/* The sync flags of an offer. */
#define WIRE_OFFER_SYNC_FLAGS   (WIRE_OFFER_SKIP_EXISTING | WIRE_OFFER_SYNC | WIRE_OFFER_DIGEST | WIRE_OFFER_DELETE)

struct wire_accept {
        uint16_t lanes;         /* granted: 1 .. the offer's lanes */
        uint16_t flags;         /* WIRE_ACCEPT_*, */
        uint32_t file;          /* the offer's */
        /* Per lane granted: chunks of its run (from its first) the receiver
         * already holds, from an interrupted attempt; the lane sends from
         * there on. 0 for lanes not granted, and for every later file of a
         * session. */
        uint32_t resume[WIRE_LANES_MAX];
        uint8_t mac[WIRE_MAC_SIZE];
        /* With WIRE_ACCEPT_RAILS (version 22): the receiver's rails, 1 ..
         * WIRE_RAILS_MAX, the one lane 0 arrived on first (Rails, above). */
        uint8_t nrails;
        struct wire_hop rails[WIRE_RAILS_MAX];
};

/* The receiver published this very transfer already (an attempt whose
 * RESULT was lost): every lane resumes at its end, and the END's digests
 * are checked against the published file's. */
#define WIRE_ACCEPT_PUBLISHED   0x0001u
/* The receiver has the entry already (an offer with a sync flag): no data
 * and no END goes; its RESULT follows (version 6, above). Never with
 * WIRE_ACCEPT_PUBLISHED; resume[] all zero. */
#define WIRE_ACCEPT_SKIP        0x0002u
/* A tree's first ACCEPT (DEST's, version 7, "Resuming a tree" above): the
 * receiver holds the job's entries 0 .. resume[0] - 1 staged from an
 * earlier attempt (1 <= resume[0] <= the offer's job_files; every other
 * resume[] zero); the next offer is entry resume[0]. */
#define WIRE_ACCEPT_RESUMED     0x0004u
/* The ACCEPT names the receiver's rails (nrails, rails[]; version 22):
 * only answering a first offer with WIRE_OFFER_RAILS. */
#define WIRE_ACCEPT_RAILS       0x0008u
#define WIRE_ACCEPT_FLAGS       (WIRE_ACCEPT_PUBLISHED | WIRE_ACCEPT_SKIP | WIRE_ACCEPT_RESUMED | WIRE_ACCEPT_RAILS)

struct wire_refuse {
        uint16_t status;
        char text[WIRE_TEXT_MAX + 1];
};

struct wire_end {
        uint32_t file;
        uint64_t bytes;
        uint8_t digest[WIRE_DIGEST_SIZE];
        uint8_t mac[WIRE_MAC_SIZE];
};

/* S->R between two files of a session: the OFFER of @file (the next) is
 * on its way, its file still being read for its digest, or not yet
 * handed to the sender. No MAC: it can only keep the receiver waiting,
 * each one for its peer_timeout at most. */
struct wire_wait {
        uint32_t file;
};

struct wire_result {
        uint16_t status;
        uint32_t file;          /* the offer's it answers */
        uint64_t bytes;         /* bytes the receiver got (the file size on success) */
        uint64_t usec;          /* receiver's first-to-last data time */
        /* A relay's (version 10, Relay chains): of the hops its ROUTE
         * named, how many published the file; those that did not, bit k
         * for hop k + 1 (hops plus their count is the route's); the first
         * of them (1 .. the route's hops; 0: none) with its status (the
         * text then says why). Zero outside a chain. */
        uint16_t hops;
        uint16_t hop_failed;
        uint16_t hop_status;
        struct nodeset hop_missing;
        uint8_t mac[WIRE_MAC_SIZE];
        char text[WIRE_TEXT_MAX + 1];
};

/* R->S on lane 0, a dry run with WIRE_OFFER_DELETE: an entry of the old
 * DEST that the session's last RESULT (of @file) counts as deleted. */
struct wire_gone {
        uint32_t file;          /* the session's last offer's (its RESULT follows) */
        uint32_t seq;           /* 0, 1, ... in the order sent */
        uint16_t kind;          /* enum wire_gone_kind */
        uint8_t mac[WIRE_MAC_SIZE];
        char name[WIRE_NAME_MAX + 1];   /* "DEST/a/b"; NUL-terminated after decode */
};

/* R->S on lane 0, before an index pack's RESULT (version 24, "Index
 * packs" above): which of its @entries records are files the receiver
 * lacks, bit k (of bits[k / 8], least significant first) for record k;
 * @needed of them. */
#define WIRE_NEED_ENTRIES_MAX   2048
struct wire_need {
        uint32_t file;          /* the index pack's (its first entry) */
        uint16_t entries;       /* its records, 1 .. WIRE_NEED_ENTRIES_MAX */
        uint16_t needed;        /* bits set */
        uint8_t mac[WIRE_MAC_SIZE];
        uint8_t bits[WIRE_NEED_ENTRIES_MAX / 8];        /* (entries + 7) / 8 on the wire */
};

enum wire_gone_kind {
        WIRE_GONE_FILE = 0,     /* a regular file */
        WIRE_GONE_DIR = 1,
        WIRE_GONE_LINK = 2,     /* a symlink */
        WIRE_GONE_OTHER = 3,    /* a device, fifo, socket */
        _WIRE_GONE_KIND_MAX,
};

/* S->R on lane 0: the nodes the receiver relays to, in order (Relay
 * chains), @hops of the route's @total from hop @first on. The part from
 * 0 comes before a session's first OFFER; those after it, in order, once
 * the offer is accepted (version 11). */
struct wire_route {
        uint16_t total;         /* the route's, 1 .. WIRE_ROUTE_MAX */
        uint16_t first;
        uint16_t hops;          /* 1 .. WIRE_ROUTE_PART_MAX, first + hops <= total */
        struct wire_hop hop[WIRE_ROUTE_PART_MAX];
};

/* R->S on lane 0 of a chain's transfer, about once a second while the
 * relay's downstream runs (version 10): the bytes each hop of the route
 * has acknowledged. No MAC: it feeds only a progress display, never a
 * verdict. */
struct wire_progress {
        uint16_t total;         /* the route's, 1 .. WIRE_ROUTE_MAX */
        uint16_t first;         /* bytes[0] is hop first's */
        uint16_t hops;          /* 1 .. WIRE_PROGRESS_PART_MAX, first + hops <= total */
        uint64_t bytes[WIRE_PROGRESS_PART_MAX];
};

/* S->R on lane 0, right before a WIRE_OFFER_LONG_NAME offer: a part of
 * its path (version 18, "Long paths" above). No MAC of its own: the
 * offer's covers the whole path. */
struct wire_name {
        uint16_t total;         /* the path's bytes, WIRE_NAME_MAX + 1 .. WIRE_PATH_MAX */
        uint16_t offset;        /* where bytes[] go in it */
        uint16_t len;           /* 1 .. WIRE_NAME_PART_MAX, offset + len <= total */
        char bytes[WIRE_NAME_PART_MAX]; /* no NUL among them */
};

/* A part of the session's landing (version 19, "Landing as the user"):
 * where its bytes go in the whole (wire_land_encode's). No MAC of its
 * own: the offer's covers the whole. */
struct wire_land {
        uint16_t total;         /* the whole's bytes, WIRE_LAND_FIXED + ... .. WIRE_LAND_MAX */
        uint16_t offset;        /* where bytes[] go in it */
        uint16_t len;           /* 1 .. WIRE_LAND_PART_MAX, offset + len <= total */
        uint8_t bytes[WIRE_LAND_PART_MAX];
};

/* What a session's LAND parts carry, whole: who the files land as and
 * where (landmsg.h's SESSION, which the receiver asks its lander for). */
enum {
        WIRE_LAND_PUSH = 1,     /* files land as the user */
        WIRE_LAND_PULL = 2,     /* version 21: the file at path is read as the user and sent back */
};
enum {
        WIRE_LAND_DIR = 1 << 0,         /* path is a directory the files go into */
        WIRE_LAND_REPLACE = 1 << 1,     /* a file there of the name is replaced, as the user may */
        _WIRE_LAND_FLAGS = WIRE_LAND_DIR | WIRE_LAND_REPLACE,
        /* A pull's only, and its only flag (version 25, xferctl get -r):
         * path may be a directory, sent back whole as a tree. */
        WIRE_LAND_TREE = 1 << 2,
        /* A push's (version 27, Attributes): the entries carry their
         * user.* extended attributes (xferctl send -X), their POSIX ACLs (-A:
         * an entry without one has none there either); the file's or
         * DEST's own, xattrs_len bytes, follow the path. */
        WIRE_LAND_XATTRS = 1 << 3,
        WIRE_LAND_ACLS = 1 << 4,
        _WIRE_LAND_PUSH_FLAGS = _WIRE_LAND_FLAGS | WIRE_LAND_XATTRS | WIRE_LAND_ACLS,
        /* A pull's (version 27: xferctl get -X, -A): the send back carries
         * them, read there as the user. */
        _WIRE_LAND_PULL_FLAGS = WIRE_LAND_TREE | WIRE_LAND_XATTRS | WIRE_LAND_ACLS,
};
struct wire_landing {
        uint8_t direction;      /* WIRE_LAND_PUSH, WIRE_LAND_PULL */
        uint8_t flags;          /* WIRE_LAND_* */
        uint16_t naddrs;        /* 1 .. WIRE_LAND_ADDRS_MAX: the nodes the credential names */
        uint8_t token[WIRE_TOKEN_SIZE];
        uint8_t addrs[WIRE_LAND_ADDRS_MAX][WIRE_ADDR_SIZE];
        char cred[WIRE_LAND_CRED_MAX + 1];      /* printable ASCII, 1 .. WIRE_LAND_CRED_MAX bytes */
        char path[WIRE_PATH_MAX + 1];           /* absolute: begins with '/' */
        /* WIRE_LAND_PULL's way back (Pulls): the daemon the file goes to
         * listens at back_addr:back_port, and the file lands there as the
         * user at back_path (back_flags: WIRE_LAND_*), back_cred (a PUSH
         * credential of the same token for back_addr) proving who asks.
         * Zero in a PUSH. */
        uint16_t back_port;
        uint8_t back_flags;
        uint64_t back_bwlimit;          /* bytes/s the file goes at (xferctl get --bwlimit), 0: none */
        uint8_t back_addr[WIRE_ADDR_SIZE];
        char back_cred[WIRE_LAND_CRED_MAX + 1];
        char back_path[WIRE_PATH_MAX + 1];
        /* With WIRE_LAND_XATTRS or _ACLS: the first entry's attributes. */
        uint16_t xattrs_len;
        uint8_t xattrs[WIRE_XATTRS_MAX];
};

/*
 * A landing as bytes, for LAND parts: direction u8, flags u8, naddrs u16,
 * token, cred_len u16, path_len u16, addrs, cred, path; a PUSH's with
 * WIRE_LAND_XATTRS or _ACLS then xattrs_len u16, xattrs; a PULL's then
 * back_port u16, back_flags u8, back_cred_len u16, back_path_len u16,
 * back_bwlimit u64, back_addr, back_cred, back_path. Encode: its
 * length, or -EINVAL (a field out of bounds), -EMSGSIZE (@cap short).
 * Decode: 0 or -EBADMSG. wire_land_hash: SHA-256 of the bytes.
 */
int wire_land_encode(void *buf, size_t cap, const struct wire_landing *l);
int wire_land_decode(const void *buf, size_t len, struct wire_landing *l);
void wire_land_hash(const void *buf, size_t len, uint8_t out[WIRE_LAND_HASH_SIZE]);
/* An entry's attributes (@len bytes, xattrs.h) as a landing with @flags
 * may carry them: well formed, of the namespaces its WIRE_LAND_XATTRS
 * and WIRE_LAND_ACLS allow (none when neither); none is always fine. */
bool wire_land_xattrs_ok(uint8_t flags, const uint8_t *buf, size_t len);

/* A decoded control message. Strings are copied out: the buffer can be reused. */
struct wire_msg {
        uint16_t type;          /* enum wire_type */
        uint32_t credits;       /* credits granted by this message (R->S) */
        union {
                struct wire_offer offer;
                struct wire_accept accept;
                struct wire_refuse refuse;
                struct wire_end end;
                struct wire_result result;
                struct wire_wait wait;
                struct wire_route route;
                struct wire_progress progress;
                struct wire_gone gone;
                struct wire_need need;
                struct wire_name name;
                struct wire_land land;
                struct wire_land xattr; /* WIRE_XATTR: an entry's attributes' part, as a landing's */
                struct wire_land rules; /* WIRE_RULES: a part of a tree's rules, as a landing's */
        };
};

/*
 * Private data. Encoders write exactly WIRE_*_SIZE bytes into @buf (which
 * must be that large), always with WIRE_MAGIC and WIRE_VERSION: the magic
 * and version fields are outputs of the decoders, for reporting. Decoders return 0, -EBADMSG when the bytes are not
 * ours (short, bad magic), or -EPROTONOSUPPORT on a version mismatch (the
 * decoded struct is still filled so the caller can report the version).
 */
void wire_encode_hello(void *buf, const struct wire_hello *h);
int wire_decode_hello(const void *buf, size_t len, struct wire_hello *h);
void wire_encode_welcome(void *buf, const struct wire_welcome *w);
int wire_decode_welcome(const void *buf, size_t len, struct wire_welcome *w);
void wire_encode_reject(void *buf, const struct wire_reject *r);
int wire_decode_reject(const void *buf, size_t len, struct wire_reject *r);

/*
 * Control messages. Encoders return the encoded length (header included,
 * at most WIRE_CTRL_MAX) or -EMSGSIZE when @cap is too small, -EINVAL when a
 * field is out of range (name empty or too long, text too long, OFFER with
 * chunk_size 0 or lanes outside 1 .. WIRE_LANES_MAX or job_files 0 or
 * file >= job_files, or pack fields without WIRE_OFFER_PACK, or with it
 * pack_entries 0 or file + pack_entries > job_files, a digest without
 * WIRE_OFFER_DIGEST or that flag without WIRE_OFFER_SYNC or with a pack,
 * WIRE_OFFER_RELAYED where it may not go (on the flag),
 * WIRE_OFFER_DELETE without WIRE_OFFER_TREE and a sync flag beside it,
 * WIRE_OFFER_DRY_RUN with a pack, a route or WIRE_OFFER_RELAYED,
 * WIRE_OFFER_LONG_NAME on an offer that may not carry it or with a name
 * of WIRE_NAME_MAX bytes or less (encoded without it, with it decoded
 * with an empty name), a name over WIRE_NAME_MAX without the flag, a
 * NAME part out of range or holding a NUL, GONE
 * with an empty name or an unknown kind,
 * ACCEPT with lanes 0 or unknown flags or SKIP with PUBLISHED or resume,
 * unknown type).
 * wire_decode() checks magic, version, type and that the length matches
 * the type exactly, and that strings are NUL-free and in bounds; returns 0,
 * -EBADMSG or -EPROTONOSUPPORT. Name *rules* (name.h) are the receiver's
 * call, so it can answer REFUSE WIRE_E_NAME rather than drop the link.
 */
int wire_encode(void *buf, size_t cap, const struct wire_msg *m);
int wire_decode(const void *buf, size_t len, struct wire_msg *m);

/* A connection's two ends, as both sides see them (see the top). */
struct wire_binding {
        uint8_t sender[WIRE_ADDR_SIZE];
        uint8_t receiver[WIRE_ADDR_SIZE];
        uint16_t port;          /* the receiver's listening port */
};

/* From the addresses rdma_cm reports: the sender's, and the receiver's
 * with its port. 0, or -EAFNOSUPPORT for anything but IPv4 and IPv6. */
int wire_binding_set(struct wire_binding *b, const struct sockaddr *sender,
                     const struct sockaddr *receiver);

/*
 * The bytes each MAC covers (see the top), in wire order. Each returns the
 * length written (at most WIRE_MAC_INPUT_MAX), -EMSGSIZE when @cap is too
 * small, or -EINVAL for a message wire_encode() would refuse (a bad name
 * or text).
 */
#define WIRE_MAC_INPUT_MAX      4608
int wire_offer_mac_input(void *buf, size_t cap, const uint8_t rnonce[WIRE_NONCE_SIZE],
                         const struct wire_binding *b, const struct wire_offer *o);
int wire_next_offer_mac_input(void *buf, size_t cap, const struct wire_offer *o);
int wire_session_info(void *buf, size_t cap, const uint8_t offer_mac[WIRE_MAC_SIZE]);
int wire_accept_mac_input(void *buf, size_t cap, const struct wire_accept *a);
int wire_lane_mac_input(void *buf, size_t cap, const struct wire_binding *b,
                        const struct wire_hello *h);
int wire_end_mac_input(void *buf, size_t cap, unsigned int lane, const struct wire_end *e);
int wire_result_mac_input(void *buf, size_t cap, unsigned int lane, const struct wire_result *r);
int wire_gone_mac_input(void *buf, size_t cap, const struct wire_gone *g);
int wire_need_mac_input(void *buf, size_t cap, const struct wire_need *n);

/* A hop from a socket address (IPv4 or IPv6, with its port): 0 or -EAFNOSUPPORT. */
int wire_hop_set(struct wire_hop *h, const struct sockaddr *sa);
/* And back: the socket address (IPv4 for ::ffff:a.b.c.d) and its length. */
socklen_t wire_hop_sockaddr(const struct wire_hop *h, struct sockaddr_storage *ss);
/* Why no relay may pass a file on to hop @h ("a loopback address", "an
 * unspecified address", "port 0"), or NULL. */
const char *wire_hop_refused(const struct wire_hop *h);
/* Whether @hops[@i] is one of @hops[0 .. @i) again (address and port). */
bool wire_route_repeats(const struct wire_hop *hops, unsigned int i);
/* "198.18.0.2:7471", "[fd00::2]:7471": for logs. */
void wire_hop_str(const struct wire_hop *h, char *buf, size_t len);
#define WIRE_HOP_STR_MAX        (46 + 2 + 6 + 1)
/* An offer's route_hash: SHA-256 over @n (u16) and then each of the
 * route's @n hops (addr, port u16), every one of them, whichever ROUTE
 * part carried it. */
void wire_route_hash(const struct wire_hop *hop, unsigned int n, uint8_t out[WIRE_ROUTE_HASH_SIZE]);

/* A dry run's verdict on an entry (its RESULT's text, "Dry runs" above). */
enum wire_verdict {
        WIRE_VERDICT_CREATE = 0,        /* "would create" */
        WIRE_VERDICT_REPLACE,           /* "would replace CSTAX" */
        WIRE_VERDICT_KEPT,              /* "skipped" */
        WIRE_VERDICT_EXISTS,            /* "exists": a directory merged into */
        _WIRE_VERDICT_MAX,
};
/* The verdict @text says, with "; ..." after it allowed (the last
 * RESULT's "deleted N"): its enum wire_verdict, and with REPLACE the
 * five letters (c, s, t, a, x or '.') in @changes, NUL-terminated
 * ("....." for the others); -EBADMSG for a text that is none. */
int wire_verdict_parse(const char *text, char changes[6]);

/* WIRE_BLOCK_SIZE blocks of a @size-byte file, the last one short. */
uint64_t wire_blocks(uint64_t size);

/*
 * The chunks lane @k of @lanes carries: [*first, *end). The file's units
 * (a WIRE_BLOCK_SIZE block, or a chunk where @chunk is larger) are cut
 * into contiguous runs in lane order, their unit counts differing by at
 * most one, so every run starts on a block boundary and is non-empty when
 * the units are at least @lanes. @chunk is a power of two dividing
 * WIRE_GROUP_SIZE, @lanes >= 1, @k < @lanes, @nchunks < 2^32.
 */
void wire_lane_range(uint64_t nchunks, uint32_t chunk, unsigned int lanes, unsigned int k,
                     uint64_t *first, uint64_t *end);

/* Bytes of chunks [first, end) of a @size-byte file cut into @chunk-byte
 * chunks (the last may be short): what a lane's END counts. */
uint64_t wire_run_bytes(uint64_t size, uint32_t chunk, uint64_t first, uint64_t end);
