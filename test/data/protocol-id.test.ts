// Tests the evaluation protocol id of a plugin dataset that keeps Spider's or BIRD's scoring (issue
// 39 §13): `{ ...spider, name: "geoquery" }`'s initial cache, summaries and manifests record
// "geoquery-test-suite-merit-v1", not Spider's "spider-test-suite-merit-v1"; Spider's, BIRD's and
// the bundled variants' ids are unchanged (their caches keep their hashes).
import { describe, expect, it } from "vitest";
import { datasetAdapter, registerDataset } from "../../lib/data/datasets/index.ts";
import { protocolIdOf } from "../../lib/oracle/oracle.ts";

registerDataset({ ...datasetAdapter("spider"), name: "geoquery-test", title: "GeoQuery (test)" });
registerDataset({ ...datasetAdapter("bird"), name: "bird-like-test", title: "A BIRD-like set (test)" });

describe("protocolIdOf names the dataset scored", () => {
  it("a plugin dataset with Spider's or BIRD's scoring gets its own id", () => {
    expect(protocolIdOf("geoquery-test", "merit")).toBe("geoquery-test-test-suite-merit-v1");
    expect(protocolIdOf("geoquery-test", "official")).toBe("geoquery-test-test-suite-official-v1");
    expect(protocolIdOf("bird-like-test", "merit")).toBe("bird-like-test-set-v1");
  });
  it("the bundled datasets keep theirs", () => {
    expect(protocolIdOf("spider", "merit")).toBe("spider-test-suite-merit-v1");
    expect(protocolIdOf("bird", "merit")).toBe("bird-set-v1");
    expect(protocolIdOf("spider-syn", "merit")).toBe("spider-test-suite-merit-v1");
    expect(protocolIdOf("spider-dk", "strict")).toBe("spider-test-suite-strict-v1");
  });
});
