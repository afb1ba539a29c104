// The fields of the custom resources shmguard's manifests use, for the strict check in
// validate.mjs: written by hand from the Prometheus Operator's PodMonitor definition
// (monitoring.coreos.com/v1). A subset: a field the CRD has but our manifests do not use is
// reported as unknown too, so a new one is added here first. Types are written as
// @kubernetes/client-node writes them, so V1ObjectMeta and V1LabelSelector come from there.
export const CRD_KINDS = {
  "monitoring.coreos.com/v1/PodMonitor": "MonitoringV1PodMonitor",
};

export const CRD_TYPES = {
  MonitoringV1PodMonitor: {
    apiVersion: "string",
    kind: "string",
    metadata: "V1ObjectMeta",
    spec: "MonitoringV1PodMonitorSpec",
  },
  MonitoringV1PodMonitorSpec: {
    selector: "V1LabelSelector",
    podMetricsEndpoints: "Array<MonitoringV1PodMetricsEndpoint>",
  },
  MonitoringV1PodMetricsEndpoint: {
    port: "string",
    path: "string",
    interval: "string",
    scrapeTimeout: "string",
  },
};
