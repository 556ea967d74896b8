/**
 * Detects a large graph's communities on a thread of its own while the build writes the rest of its
 * index (the local store awaits them last: a PendingDelta). On 2 cores clustering Go's src took
 * 1.5-3.5 s of a full build's serial tail with the other core idle. One request per thread: it
 * exits when it has answered, and the memory the clustering took goes with it.
 */
import { isMainThread, parentPort, workerData } from "node:worker_threads";
import { log } from "../../shared/log.js";
import { threadReply } from "../thread-reply.js";
import { detectCommunities, type CommunityNode, type CommunityResult } from "./communities.js";
import { testClassifier } from "./test-code.js";
import type { GraphCommunity, GraphEdge } from "./types.js";

interface Request {
  clusterNodes: CommunityNode[];
  edges: GraphEdge[];
  testPatterns: string[];
}

interface Reply {
  communityOf?: [string, number][];
  communities?: GraphCommunity[];
  error?: string;
}

/** detectCommunities on a thread; should the thread fail, on this one (the same result, only later). */
export function detectCommunitiesApart(nodes: CommunityNode[], edges: GraphEdge[], testPatterns: string[]): Promise<CommunityResult> {
  // Only what clustering reads crosses to the thread, not the nodes' code.
  const clusterNodes = nodes.map(({ id, name, type, file_path }) => ({ id, name, type, file_path }));
  return threadReply<Reply>(new URL("./communities-thread.js", import.meta.url), { clusterNodes, edges, testPatterns } satisfies Request, "the clustering thread")
    .then((r): CommunityResult => {
      if (r.error !== undefined) throw new Error(r.error);
      return { communityOf: new Map(r.communityOf), communities: r.communities! };
    })
    .catch((err: Error) => {
      log.warn("detecting communities on a thread failed; detecting them here", { error: err.message });
      return detectCommunities(clusterNodes, edges, testClassifier(testPatterns));
    });
}

if (!isMainThread && (workerData as Partial<Request> | undefined)?.clusterNodes) {
  const { clusterNodes, edges, testPatterns } = workerData as Request;
  try {
    const { communityOf, communities } = detectCommunities(clusterNodes, edges, testClassifier(testPatterns));
    parentPort!.postMessage({ communityOf: [...communityOf], communities } satisfies Reply);
  } catch (err) {
    parentPort!.postMessage({ error: (err as Error).message } satisfies Reply);
  }
}
