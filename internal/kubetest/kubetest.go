// Package kubetest is what tests of Kubernetes manifests share: just
// enough of an API server for kubectl's client-side dry run.
package kubetest

import (
	"encoding/json"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Resource is a namespaced API resource: its plural name and its kind.
type Resource struct{ Name, Kind string }

// Discovery answers kubectl's REST mapping for core v1's resources and
// one group's (GROUP/v1); every object is not found, so kubectl's dry
// run checks the manifests against the types alone.
func Discovery(core []Resource, group string, groupResources []Resource) http.Handler {
	list := func(gv string, rs []Resource) metav1.APIResourceList {
		l := metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv}
		for _, r := range rs {
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: r.Name, Kind: r.Kind, Namespaced: true, Verbs: metav1.Verbs{"get", "list", "create", "patch"}})
		}
		return l
	}
	gv := metav1.GroupVersionForDiscovery{GroupVersion: group + "/v1", Version: "v1"}
	docs := map[string]any{
		"/api": metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}},
		"/apis": metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{{
			Name: group, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}}},
		"/api/v1":                list("v1", core),
		"/apis/" + group + "/v1": list(group+"/v1", groupResources),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if d, ok := docs[r.URL.Path]; ok {
			json.NewEncoder(w).Encode(d)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound, Message: r.URL.Path + " not found"})
	})
}
