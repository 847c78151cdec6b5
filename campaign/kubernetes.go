package campaign

import (
	"fmt"
	"path"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/atmlab/atmlab/harness/clock"
)

// Kubernetes' files, in the campaign's folder.
const (
	KubeShards = "campaign.yaml" // the lab's ConfigMap, the results' claim, the Indexed Job
	KubeMerge  = "merge.yaml"    // the merge Job
	KubeSubmit = "submit.sh"     // applies the first, waits for the Job, applies the second
)

// DefaultImage is the container image --image defaults to: one built from
// the repository (docs/campaigns.md), with atmlab on its PATH.
const DefaultImage = "atmlab:latest"

// Where the pods see the lab file and the results.
const (
	kubeLabDir     = "/lab"
	kubeResultsDir = "/results"
	kubeLabKey     = "lab.yaml"
	kubeNobody     = 65534 // the user unprivileged pods run as, and the results volume's group
)

// RealTimeCapabilities are all a real-time shard's container keeps: a lab
// builds network namespaces and mounts them under /run/netns (SYS_ADMIN),
// makes TAPs, veths, addresses, routes and qdiscs in them (NET_ADMIN), and
// probes each host's path with an ICMP socket (NET_RAW). `atmlab up`, its
// exec and a lab run were tested under capsh with exactly these, and up
// with /proc/sys read-only as in a container, then remounted
// (docs/campaigns.md); with any one of them dropped, up fails.
var RealTimeCapabilities = []corev1.Capability{"NET_ADMIN", "NET_RAW", "SYS_ADMIN"}

// RemountSysctls makes /proc/sys writable again in a real-time shard's
// container: the runtime mounts it read-only, and a lab writes its hosts'
// sysctls there (in their own namespaces: the node's are not touched).
const RemountSysctls = "[ -w /proc/sys/net/ipv4/ip_forward ] || mount -o remount,bind,rw /proc/sys\n"

// KubernetesObjects returns the campaign's objects: a ConfigMap holding the
// lab file, a ReadWriteMany claim for the results, the Indexed Job whose
// pod with completion index I runs shard I+1 of N into
// /results/shard-<I+1>, and the merge Job that renders /results/report.html
// from them. Real-time pods run as root with RealTimeCapabilities only,
// AppArmor unconfined (mounts), /proc/sys made writable and the host's
// /dev/net/tun, one per node (anti-affinity: two labs on one
// machine would measure over each other); virtual-time pods run as nobody
// with no capabilities at all. lab is the lab file's content.
func KubernetesObjects(p Plan, lab []byte) (cm *corev1.ConfigMap, pvc *corev1.PersistentVolumeClaim, shards, merge *batchv1.Job) {
	name := p.JobName()
	labels := map[string]string{"app.kubernetes.io/name": "atmlab", "atmlab/campaign": name}
	meta := func(n string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: n, Labels: labels} }

	cm = &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(name + "-lab"),
		Data:       map[string]string{kubeLabKey: string(lab)},
	}
	pvc = &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: meta(name + "-results"),
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}, // shards on several nodes, then the merge
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}

	volumes := []corev1.Volume{
		{Name: "lab", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}},
		{Name: "results", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name}}},
	}
	mounts := []corev1.VolumeMount{
		{Name: "lab", MountPath: kubeLabDir, ReadOnly: true},
		{Name: "results", MountPath: kubeResultsDir},
	}
	script := "set -eu\nk=$((JOB_COMPLETION_INDEX + 1))\nout=" + kubeResultsDir + "/shard-$k\n"
	if p.Clock == clock.Real {
		script += RemountSysctls
	}
	script += "exec " + p.shardCommand("atmlab", path.Join(kubeLabDir, kubeLabKey)) + "\n"
	shard := corev1.Container{
		Name:    "shard",
		Image:   p.Image,
		Command: []string{"/bin/sh", "-c", script},
		// What the Job controller sets too, written out: the pod's completion index.
		Env: []corev1.EnvVar{{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + batchv1.JobCompletionIndexAnnotation + "']"}}}},
		VolumeMounts: mounts,
	}
	pod := corev1.PodSpec{
		RestartPolicy:   corev1.RestartPolicyNever,
		SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr(int64(kubeNobody))}, // the merge (nobody) writes the report beside the shards
		Volumes:         volumes,
	}
	if p.Clock == clock.Real {
		RealTimePod(&pod, &shard)
	} else {
		shard.SecurityContext = unprivileged()
		shard.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	}
	pod.Containers = []corev1.Container{shard}

	podLabels := map[string]string{"atmlab/campaign": name, "atmlab/clock": p.Clock.String()}
	n := int32(p.Shards)
	indexed := batchv1.IndexedCompletion
	shards = &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(name),
		Spec: batchv1.JobSpec{
			CompletionMode:       &indexed,
			Completions:          &n,
			Parallelism:          &n, // real time: the anti-affinity keeps it to one per node
			BackoffLimitPerIndex: ptr(int32(1)),
			Template:             corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels}, Spec: pod},
		},
	}

	mergeScript := "set -eu\nexec atmlab report " + kubeResultsDir + "/shard-*/ --out " + kubeResultsDir + "\n"
	mergePod := corev1.PodSpec{
		RestartPolicy:   corev1.RestartPolicyNever,
		SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr(int64(kubeNobody))},
		Volumes:         volumes[1:],
		Containers: []corev1.Container{{
			Name:            "merge",
			Image:           p.Image,
			Command:         []string{"/bin/sh", "-c", mergeScript},
			VolumeMounts:    mounts[1:],
			SecurityContext: unprivileged(),
		}},
	}
	merge = &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(name + "-merge"),
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr(int32(0)),
			Template:     corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"atmlab/campaign": name}}, Spec: mergePod},
		},
	}
	return cm, pvc, shards, merge
}

// unprivileged is the security context of a container that needs nothing:
// a virtual-time shard or the merge.
func unprivileged() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsUser:                ptr(int64(kubeNobody)),
		RunAsGroup:               ptr(int64(kubeNobody)),
		RunAsNonRoot:             ptr(true),
		Privileged:               ptr(false),
		AllowPrivilegeEscalation: ptr(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// RealTimePod gives a real-time lab's container c in pod what it needs and
// no more: root with RealTimeCapabilities only, AppArmor unconfined
// (mounts), two CPUs, the host's /dev/net/tun, and one such pod per node
// (anti-affinity on the atmlab/clock=real label, which the caller sets on
// the pod's template: two labs on one machine would measure over each
// other). The container's script starts with RemountSysctls.
func RealTimePod(pod *corev1.PodSpec, c *corev1.Container) {
	c.SecurityContext = &corev1.SecurityContext{
		RunAsUser:                ptr(int64(0)),
		RunAsNonRoot:             ptr(false),
		Privileged:               ptr(false),
		AllowPrivilegeEscalation: ptr(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: RealTimeCapabilities},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		// The runtime's default AppArmor profile forbids mount, which a
		// lab needs for /run/netns and RemountSysctls.
		AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined},
	}
	c.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
	charDev := corev1.HostPathCharDev
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "tun", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/dev/net/tun", Type: &charDev}}})
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "tun", MountPath: "/dev/net/tun"})
	pod.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"atmlab/clock": clock.Real.String()}},
			TopologyKey:   "kubernetes.io/hostname",
		}},
	}}
}

// KubernetesFiles returns the campaign's manifests and a submit script:
// the ConfigMap, claim and Indexed Job in one file, the merge Job in a
// second (Kubernetes has no dependencies between Jobs: the script applies
// it once the Indexed Job is complete or has failed).
func KubernetesFiles(p Plan, lab []byte) ([]File, error) {
	cm, pvc, shards, merge := KubernetesObjects(p, lab)
	var docs []string
	for _, o := range []any{cm, pvc, shards} {
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		docs = append(docs, string(b))
	}
	mb, err := yaml.Marshal(merge)
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("# atmlab campaign: lab %s in %d shards, %s time (image %s). Submit with ./%s.\n", p.Name, p.Shards, p.Clock, p.Image, KubeSubmit)
	var sub strings.Builder
	fmt.Fprintf(&sub, "#!/bin/sh\n")
	fmt.Fprintf(&sub, "# Run the campaign: the shards' Indexed Job, then the merge once it has ended, complete or failed.\n")
	fmt.Fprintf(&sub, "set -eu\ncd \"$(dirname \"$0\")\"\n")
	fmt.Fprintf(&sub, "kubectl apply -f %s\n", KubeShards)
	fmt.Fprintf(&sub, "until kubectl get job/%s -o jsonpath='{.status.conditions[?(@.status==\"True\")].type}' | grep -qwE 'Complete|Failed'; do sleep 10; done\n", shards.Name)
	fmt.Fprintf(&sub, "kubectl apply -f %s\n", KubeMerge)
	fmt.Fprintf(&sub, "kubectl wait --for=condition=Complete --timeout=10m job/%s\n", merge.Name)
	fmt.Fprintf(&sub, "echo \"report: %s/report.html in volume claim %s\"\n", kubeResultsDir, pvc.Name)
	return []File{
		{Name: KubeShards, Mode: 0o644, Data: []byte(head + "---\n" + strings.Join(docs, "---\n"))},
		{Name: KubeMerge, Mode: 0o644, Data: append([]byte(head+"---\n"), mb...)},
		{Name: KubeSubmit, Mode: 0o755, Data: []byte(sub.String())},
	}, nil
}

func ptr[T any](v T) *T { return &v }
