package rpmgen

// Data types of header entries (rpmtag.h rpmTagType).
const (
	typeInt16       = 3
	typeInt32       = 4
	typeInt64       = 5
	typeString      = 6
	typeBin         = 7
	typeStringArray = 8
	typeI18NString  = 9
)

// typeAlign is the alignment rpm requires of each type's data in the data store.
var typeAlign = [...]int{1, 1, 1, 2, 4, 8, 1, 1, 1, 1}

// Region tags, which seal the signature and the main header.
const (
	tagHeaderSignatures = 62
	tagHeaderImmutable  = 63
)

// Signature header tags (RPMSIGTAG_*).
const (
	sigSHA1        = 269
	sigSHA256      = 273
	sigSize        = 1000
	sigMD5         = 1004
	sigPayloadSize = 1007
)

// Main header tags (RPMTAG_*).
const (
	tagI18NTable         = 100
	tagName              = 1000
	tagVersion           = 1001
	tagRelease           = 1002
	tagEpoch             = 1003
	tagSummary           = 1004
	tagDescription       = 1005
	tagBuildTime         = 1006
	tagBuildHost         = 1007
	tagSize              = 1009
	tagVendor            = 1011
	tagLicense           = 1014
	tagPackager          = 1015
	tagGroup             = 1016
	tagURL               = 1020
	tagOS                = 1021
	tagArch              = 1022
	tagFileSizes         = 1028
	tagFileModes         = 1030
	tagFileRdevs         = 1033
	tagFileMtimes        = 1034
	tagFileDigests       = 1035
	tagFileLinkTos       = 1036
	tagFileFlags         = 1037
	tagFileUserName      = 1039
	tagFileGroupName     = 1040
	tagSourceRPM         = 1044
	tagFileVerifyFlags   = 1045
	tagProvideName       = 1047
	tagRequireFlags      = 1048
	tagRequireName       = 1049
	tagRequireVersion    = 1050
	tagConflictFlags     = 1053
	tagConflictName      = 1054
	tagConflictVersion   = 1055
	tagRPMVersion        = 1064
	tagChangelogTime     = 1080
	tagChangelogName     = 1081
	tagChangelogText     = 1082
	tagObsoleteName      = 1090
	tagFileDevices       = 1095
	tagFileInodes        = 1096
	tagFileLangs         = 1097
	tagSourcePackage     = 1106
	tagProvideFlags      = 1112
	tagProvideVersion    = 1113
	tagObsoleteFlags     = 1114
	tagObsoleteVersion   = 1115
	tagDirIndexes        = 1116
	tagBasenames         = 1117
	tagDirnames          = 1118
	tagPayloadFormat     = 1124
	tagPayloadCompressor = 1125
	tagPayloadFlags      = 1126
	tagFileDigestAlgo    = 5011
	tagRecommendName     = 5046
	tagRecommendVersion  = 5047
	tagRecommendFlags    = 5048
	tagSuggestName       = 5049
	tagSuggestVersion    = 5050
	tagSuggestFlags      = 5051
	tagSupplementName    = 5052
	tagSupplementVersion = 5053
	tagSupplementFlags   = 5054
	tagEnhanceName       = 5055
	tagEnhanceVersion    = 5056
	tagEnhanceFlags      = 5057
	tagPayloadDigest     = 5092
	tagPayloadDigestAlgo = 5093
)

// Dependency flag bits (rpmds.h RPMSENSE_*).
const (
	senseLess      = 1 << 1
	senseGreater   = 1 << 2
	senseEqual     = 1 << 3
	senseScriptPre = 1 << 9
	senseRPMLib    = 1 << 24
)

// File modes and flags.
const (
	modeDir     = 0o040755
	modeRegular = 0o100644
	fileGhost   = 1 << 6 // RPMFILE_GHOST
)

// hashSHA256 is rpm's PGPHASHALGO_SHA256, the algorithm of file and payload digests.
const hashSHA256 = 8
