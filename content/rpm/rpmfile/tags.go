package rpmfile

import "strconv"

// Data types of header entries (rpmtag.h rpmTagType).
const (
	typeChar        = 1
	typeInt8        = 2
	typeInt16       = 3
	typeInt32       = 4
	typeInt64       = 5
	typeString      = 6
	typeBin         = 7
	typeStringArray = 8
	typeI18NString  = 9
)

var typeNames = [...]string{"null", "char", "int8", "int16", "int32", "int64", "string", "bin", "string array", "i18n string"}

func typeName(t uint32) string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "type " + strconv.FormatUint(uint64(t), 10)
}

// typeSize is the size of one element of a fixed-size type, 0 for strings.
var typeSize = [...]uint32{0, 1, 1, 2, 4, 8, 0, 1, 0, 0}

// Region tags (the first entry of a sealed header) and the lowest ordinary tag.
const (
	tagHeaderImage      = 61
	tagHeaderSignatures = 62
	tagHeaderImmutable  = 63
	tagI18NTable        = 100
)

// Tags in the signature header (RPMSIGTAG_*).
const (
	sigDSA             = 267
	sigRSA             = 268
	sigLongArchiveSize = 271
	sigOpenPGP         = 278
	sigPGP             = 1002
	sigGPG             = 1005
	sigPayloadSize     = 1007
)

// Tags in the main header (RPMTAG_*).
const (
	tagDSAHeader        = 267
	tagRSAHeader        = 268
	tagLongArchiveSize  = 271
	tagOpenPGP          = 278
	tagName             = 1000
	tagVersion          = 1001
	tagRelease          = 1002
	tagEpoch            = 1003
	tagSummary          = 1004
	tagDescription      = 1005
	tagBuildTime        = 1006
	tagBuildHost        = 1007
	tagSize             = 1009
	tagVendor           = 1011
	tagLicense          = 1014
	tagPackager         = 1015
	tagGroup            = 1016
	tagURL              = 1020
	tagArch             = 1022
	tagOldFilenames     = 1027
	tagFileModes        = 1030
	tagFileDigests      = 1035
	tagFileFlags        = 1037
	tagSourceRPM        = 1044
	tagArchiveSize      = 1046
	tagProvideName      = 1047
	tagRequireFlags     = 1048
	tagRequireName      = 1049
	tagRequireVersion   = 1050
	tagConflictFlags    = 1053
	tagConflictName     = 1054
	tagConflictVersion  = 1055
	tagChangelogTime    = 1080
	tagChangelogName    = 1081
	tagChangelogText    = 1082
	tagObsoleteName     = 1090
	tagSourcePackage    = 1106
	tagProvideFlags     = 1112
	tagProvideVersion   = 1113
	tagObsoleteFlags    = 1114
	tagObsoleteVersion  = 1115
	tagDirIndexes       = 1116
	tagBasenames        = 1117
	tagDirnames         = 1118
	tagOldSuggestName   = 1156
	tagOldSuggestVer    = 1157
	tagOldSuggestFlags  = 1158
	tagOldEnhanceName   = 1159
	tagOldEnhanceVer    = 1160
	tagOldEnhanceFlags  = 1161
	tagLongSize         = 5009
	tagRecommendName    = 5046
	tagRecommendVersion = 5047
	tagRecommendFlags   = 5048
	tagSuggestName      = 5049
	tagSuggestVersion   = 5050
	tagSuggestFlags     = 5051
	tagSupplementName   = 5052
	tagSupplementVer    = 5053
	tagSupplementFlags  = 5054
	tagEnhanceName      = 5055
	tagEnhanceVersion   = 5056
	tagEnhanceFlags     = 5057
	tagPayloadSizeAlt   = 5113
	tagRPMFormat        = 5114
)

type tagInfo struct {
	name string
	typ  uint32
}

// headerTags are the main-header tags this package reads, with the type rpm's tag table
// gives them; like rpm, a known tag of another type makes the header invalid.
var headerTags = map[uint32]tagInfo{
	tagI18NTable:        {"headeri18ntable", typeStringArray},
	tagDSAHeader:        {"dsaheader", typeBin},
	tagRSAHeader:        {"rsaheader", typeBin},
	tagLongArchiveSize:  {"longarchivesize", typeInt64},
	tagOpenPGP:          {"openpgp", typeStringArray},
	tagName:             {"name", typeString},
	tagVersion:          {"version", typeString},
	tagRelease:          {"release", typeString},
	tagEpoch:            {"epoch", typeInt32},
	tagSummary:          {"summary", typeI18NString},
	tagDescription:      {"description", typeI18NString},
	tagBuildTime:        {"buildtime", typeInt32},
	tagBuildHost:        {"buildhost", typeString},
	tagSize:             {"size", typeInt32},
	tagVendor:           {"vendor", typeString},
	tagLicense:          {"license", typeString},
	tagPackager:         {"packager", typeString},
	tagGroup:            {"group", typeI18NString},
	tagURL:              {"url", typeString},
	tagArch:             {"arch", typeString},
	tagOldFilenames:     {"oldfilenames", typeStringArray},
	tagFileModes:        {"filemodes", typeInt16},
	tagFileDigests:      {"filedigests", typeStringArray},
	tagFileFlags:        {"fileflags", typeInt32},
	tagSourceRPM:        {"sourcerpm", typeString},
	tagArchiveSize:      {"archivesize", typeInt32},
	tagProvideName:      {"providename", typeStringArray},
	tagRequireFlags:     {"requireflags", typeInt32},
	tagRequireName:      {"requirename", typeStringArray},
	tagRequireVersion:   {"requireversion", typeStringArray},
	tagConflictFlags:    {"conflictflags", typeInt32},
	tagConflictName:     {"conflictname", typeStringArray},
	tagConflictVersion:  {"conflictversion", typeStringArray},
	tagChangelogTime:    {"changelogtime", typeInt32},
	tagChangelogName:    {"changelogname", typeStringArray},
	tagChangelogText:    {"changelogtext", typeStringArray},
	tagObsoleteName:     {"obsoletename", typeStringArray},
	tagSourcePackage:    {"sourcepackage", typeInt32},
	tagProvideFlags:     {"provideflags", typeInt32},
	tagProvideVersion:   {"provideversion", typeStringArray},
	tagObsoleteFlags:    {"obsoleteflags", typeInt32},
	tagObsoleteVersion:  {"obsoleteversion", typeStringArray},
	tagDirIndexes:       {"dirindexes", typeInt32},
	tagBasenames:        {"basenames", typeStringArray},
	tagDirnames:         {"dirnames", typeStringArray},
	tagOldSuggestName:   {"oldsuggestsname", typeStringArray},
	tagOldSuggestVer:    {"oldsuggestsversion", typeStringArray},
	tagOldSuggestFlags:  {"oldsuggestsflags", typeInt32},
	tagOldEnhanceName:   {"oldenhancesname", typeStringArray},
	tagOldEnhanceVer:    {"oldenhancesversion", typeStringArray},
	tagOldEnhanceFlags:  {"oldenhancesflags", typeInt32},
	tagLongSize:         {"longsize", typeInt64},
	tagRecommendName:    {"recommendname", typeStringArray},
	tagRecommendVersion: {"recommendversion", typeStringArray},
	tagRecommendFlags:   {"recommendflags", typeInt32},
	tagSuggestName:      {"suggestname", typeStringArray},
	tagSuggestVersion:   {"suggestversion", typeStringArray},
	tagSuggestFlags:     {"suggestflags", typeInt32},
	tagSupplementName:   {"supplementname", typeStringArray},
	tagSupplementVer:    {"supplementversion", typeStringArray},
	tagSupplementFlags:  {"supplementflags", typeInt32},
	tagEnhanceName:      {"enhancename", typeStringArray},
	tagEnhanceVersion:   {"enhanceversion", typeStringArray},
	tagEnhanceFlags:     {"enhanceflags", typeInt32},
	tagPayloadSizeAlt:   {"payloadsizealt", typeInt64},
	tagRPMFormat:        {"rpmformat", typeInt32},
}

// sigTags are the signature-header tags this package reads. rpm does not type-check the
// signature header as a whole, but refuses these tags when merging them if the type is off.
var sigTags = map[uint32]tagInfo{
	sigDSA:             {"dsa", typeBin},
	sigRSA:             {"rsa", typeBin},
	sigLongArchiveSize: {"longarchivesize", typeInt64},
	sigOpenPGP:         {"openpgp", typeStringArray},
	sigPGP:             {"pgp", typeBin},
	sigGPG:             {"gpg", typeBin},
	sigPayloadSize:     {"payloadsize", typeInt32},
}

func tagTable(s Section) map[uint32]tagInfo {
	if s == SectionSignature {
		return sigTags
	}
	return headerTags
}

func tagLabel(s Section, tag uint32) string {
	switch tag {
	case tagHeaderImage:
		return "headerimage"
	case tagHeaderSignatures:
		return "headersignatures"
	case tagHeaderImmutable:
		return "headerimmutable"
	}
	if ti, ok := tagTable(s)[tag]; ok {
		return ti.name
	}
	return "unknown"
}

// stringClass reports whether t is one of the string types, which rpm lets stand in for
// each other.
func stringClass(t uint32) bool {
	return t == typeString || t == typeStringArray || t == typeI18NString
}
