/**
 * compactcli's compaction for pi: pi's own compactions, summarized by `compactcli hook`.
 *
 * Put this file in ~/.pi/agent/extensions/ (or a project's .pi/extensions/). When pi is about
 * to compact a session (over its threshold, or /compact), it hands `compactcli hook` the
 * session file and the entry pi keeps from, and writes compactcli's extractive summary of the
 * entries before it into its compaction entry: offline, no model call. If compactcli is not
 * found, fails, or has nothing to say, pi compacts as it always does.
 *
 * COMPACTCLI names the command when `compactcli` is not on PATH.
 */

import { execFileSync } from "node:child_process";

export default function (pi: any) {
	pi.on("session_before_compact", async (event: any, ctx: any) => {
		const file = ctx.sessionManager?.getSessionFile?.();
		if (!file) return undefined; // a session kept in memory only
		const { preparation, customInstructions } = event;
		const payload = JSON.stringify({
			hook_event_name: "session_before_compact",
			transcript_path: file,
			first_kept_entry_id: preparation.firstKeptEntryId ?? null,
			focus: customInstructions ?? null,
		});
		let summary = "";
		try {
			summary = execFileSync(process.env.COMPACTCLI || "compactcli", ["hook"], {
				input: payload,
				encoding: "utf-8",
				timeout: 120_000,
				stdio: ["pipe", "pipe", "pipe"],
			});
		} catch {
			return undefined; // pi's own compaction
		}
		if (!summary.trim()) return undefined;
		return {
			compaction: {
				summary: summary.trim(),
				firstKeptEntryId: preparation.firstKeptEntryId,
				tokensBefore: preparation.tokensBefore,
			},
		};
	});
}
