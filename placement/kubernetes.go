package placement

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/atmlab/atmlab/campaign"
	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/internal/shellquote"
)

// KubeManifest is the split lab's manifest in the results folder.
const KubeManifest = "split.yaml"

// Where the pods see the lab file.
const (
	kubeLabDir = "/lab"
	kubeLabKey = "lab.yaml"
)

// KubernetesObjects returns the split lab's objects: a ConfigMap holding
// the lab file, a headless Service that gives pod k the stable name
// <name>-k.<name> (published before the pod is ready, so that the parts
// find each other while they start), and a StatefulSet of one pod per
// part, started all at once, pod k running part k with its peers by those
// names. Each pod is a real-time lab's (campaign.RealTimePod: its
// capabilities, the host's /dev/net/tun, one per node).
func KubernetesObjects(s Split) (*corev1.ConfigMap, *corev1.Service, *appsv1.StatefulSet) {
	name := s.Name()
	labels := map[string]string{"app.kubernetes.io/name": "atmlab", "atmlab/split": name}
	meta := func(n string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: n, Labels: labels} }
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(name + "-lab"),
		Data:       map[string]string{kubeLabKey: string(s.Src)},
	}
	selector := map[string]string{"atmlab/split": name}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(name),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 selector,
			PublishNotReadyAddresses: true,
		},
	}
	for k := range s.Parts {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "cut-" + strconv.Itoa(k), Protocol: corev1.ProtocolUDP, Port: int32(s.Port + k)})
	}

	part := corev1.Container{
		Name:         "part",
		Image:        s.Image,
		Command:      []string{"/bin/sh", "-c", kubeScript(s, name)},
		VolumeMounts: []corev1.VolumeMount{{Name: "lab", MountPath: kubeLabDir, ReadOnly: true}},
	}
	pod := corev1.PodSpec{
		Volumes: []corev1.Volume{{Name: "lab", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}}},
		// A part's SIGTERM handler takes its lab down: time for that.
		TerminationGracePeriodSeconds: ptr(int64(60)),
	}
	campaign.RealTimePod(&pod, &part)
	pod.Containers = []corev1.Container{part}
	podLabels := map[string]string{"app.kubernetes.io/name": "atmlab", "atmlab/split": name, "atmlab/clock": clock.Real.String()}
	sts := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: meta(name),
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr(int32(len(s.Parts))),
			ServiceName:         svc.Name,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: selector},
			Template:            corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels}, Spec: pod},
		},
	}
	return cm, svc, sts
}

// kubeScript is the pods' shell script: the pod's ordinal (the end of its
// host name, <name>-k) chooses its part and its peers' names.
func kubeScript(s Split, name string) string {
	var b strings.Builder
	b.WriteString("set -eu\nk=${HOSTNAME##*-}\ncase $k in\n")
	for k := range s.Parts {
		args := s.PartArgs(path.Join(kubeLabDir, kubeLabKey), k, func(j int) string { return name + "-" + strconv.Itoa(j) + "." + name })
		fmt.Fprintf(&b, "%d) set -- %s;;\n", k, quoteAll(args))
	}
	b.WriteString("*) echo \"pod $HOSTNAME: no part $k\" >&2; exit 2;;\nesac\n")
	b.WriteString(campaign.RemountSysctls)
	b.WriteString("exec atmlab \"$@\"\n")
	return b.String()
}

// KubernetesFile is the split lab's manifest: the ConfigMap, the Service
// and the StatefulSet, one YAML document each.
func KubernetesFile(s Split) ([]byte, error) {
	cm, svc, sts := KubernetesObjects(s)
	docs := []string{fmt.Sprintf("# atmlab split lab %s: %d parts (%s), one pod each. atmlab up %s --on kubernetes applies it.\n",
		s.Lab, len(s.Parts), strings.Join(s.Parts, ", "), path.Base(s.File))}
	for _, o := range []any{cm, svc, sts} {
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		docs = append(docs, string(b))
	}
	return []byte(strings.Join(docs, "---\n")), nil
}

// quoteAll is the words as shell text, each one word.
func quoteAll(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellquote.Quote(w)
	}
	return strings.Join(q, " ")
}

func ptr[T any](v T) *T { return &v }
