package ansible

import "pith/meta"

// NamespaceUnit is the unit of a namespace's metadata, for tests: only the Galaxy API
// makes namespaces.
func NamespaceUnit(name, description string) meta.Content {
	return namespaceUnit(namespaceAttrs{Name: name, Description: description}, nil)
}

// CollectionID is the pulp_id of the collection namespace.name, for tests.
func CollectionID(namespace, name string) string { return collectionID(namespace, name) }
