#pragma once

#include <functional>
#include <string>

#include "master/front/front_door.h"
#include "master/front/http/router.h"
#include "storage/models_repo.h"

namespace det::master::http {

// What a model version keeps of checkpoint `uuid` (core_routes.h TrialRoutes::
// CheckpointToRegister), for a user who may see it.
using CheckpointToRegister = std::function<Result<storage::RegisteredCheckpoint>(
    const auth::Principal& user, const std::string& uuid)>;

// Determined's model registry (ModelRegistry, master/experiments/model_registry.h) at its REST
// paths and shapes, for its CLI (`det model ...`), SDK (`client.create_model`, `get_model`,
// `register_version`, ...) and the WebUI. {model_name} is a name, or an id when all digits.
//
//   GET    /api/v1/models                    ?name= &description= (parts, any case) &labels=
//                                            &archived= &id= &userIds= &users= &workspaceIds=
//                                            &workspaceNames= &sortBy=SORT_BY_NAME|..._DESCRIPTION
//                                            |..._CREATION_TIME|..._LAST_UPDATED_TIME|
//                                            ..._NUM_VERSIONS|..._WORKSPACE &orderBy=ORDER_BY_ASC|
//                                            ORDER_BY_DESC &offset= &limit=
//                                            -> {"models": [v1Model], "pagination"}
//   POST   /api/v1/models                    {name, description, metadata, labels, notes,
//                                             workspaceName | workspaceId} -> {"model"}
//   GET    /api/v1/models/{model_name}       -> {"model"}
//   PATCH  /api/v1/models/{model_name}       {name, description, metadata, labels, notes,
//                                             workspaceName | workspaceId} -> {"model"}
//   POST   /api/v1/models/{model_name}/archive, /unarchive   -> {}
//   POST   /api/v1/models/{model_name}/move  {destinationWorkspaceId} -> {}
//   DELETE /api/v1/models/{model_name}       -> {} (the owner or an admin)
//   GET    /api/v1/model/labels              -> {"labels": [...]} (the most used first)
//   GET    /api/v1/models/{model_name}/versions   ?sortBy=SORT_BY_VERSION|SORT_BY_CREATION_TIME
//                                            &orderBy= &offset= &limit=
//                                            -> {"model", "modelVersions", "pagination"}
//   POST   /api/v1/models/{model_name}/versions   {checkpointUuid, name, comment, metadata,
//                                             labels, notes} -> {"modelVersion"}
//   GET    /api/v1/models/{model_name}/versions/{model_version_num}   -> {"modelVersion"}
//   PATCH  /api/v1/models/{model_name}/versions/{model_version_num}   {name, comment, metadata,
//                                             labels, notes} -> {"modelVersion"}
//   DELETE /api/v1/models/{model_name}/versions/{model_version_num}   -> {} (owner or admin)
//
// v1Model: id, name, description, metadata, labels, notes, archived, workspaceId, userId,
// username, creationTime, lastUpdatedTime, numVersions. v1ModelVersion: id, version, name,
// comment, metadata, labels, notes, userId, username, creationTime, lastUpdatedTime, checkpoint
// (v1Checkpoint, as it was registered), model (v1Model). Null body fields are unset. The only
// workspace is Determined's default (1, "Uncategorized"); another is 404. Users' tokens only.
void RouteModelApi(Router& routes, FrontDoor& front, CheckpointToRegister checkpoint_to_register);

}  // namespace det::master::http
